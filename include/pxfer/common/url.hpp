#pragma once
// pxfer://HOST[:PORT]/PATH, HOST being a name, an IPv4 address or a bracketed IPv6 address.
#include "pxfer/common/layer.hpp"
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace pxfer {

inline constexpr std::uint16_t default_port = 7521;

struct Url {
  std::string host;        // without brackets
  std::uint16_t port = default_port;
  std::string path;        // relative to the server's export root, leading '/' removed
  bool trailing_slash = false;  // "into this directory"

  // "host:port" with brackets for IPv6, for messages.
  std::string authority() const;
  std::string to_string() const;
};

bool looks_like_url(std::string_view text);
// Returns nullopt and fills `why` when the text is not a valid pxfer URL.
std::optional<Url> parse_url(std::string_view text, std::string* why = nullptr);

// "HOST:PORT", "[::1]:PORT", ":PORT" (all addresses) for pxferd --listen.
struct Endpoint {
  std::string host;
  std::uint16_t port = default_port;
};
std::optional<Endpoint> parse_endpoint(std::string_view text, std::string* why = nullptr);

}  // namespace pxfer
