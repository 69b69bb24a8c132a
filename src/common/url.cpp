#include "pxfer/common/url.hpp"

#include <charconv>

namespace pxfer {
namespace {

constexpr std::string_view scheme = "pxfer://";

bool fail(std::string* why, const char* text) {
  if (why) *why = text;
  return false;
}

// Parses "host", "host:port", "[v6]", "[v6]:port" into host and port.
bool parse_host_port(std::string_view text, std::string& host, std::uint16_t& port, std::string* why,
                     bool allow_port_zero) {
  std::string_view port_text;
  if (!text.empty() && text.front() == '[') {
    auto close = text.find(']');
    if (close == std::string_view::npos) return fail(why, "missing ']' after IPv6 address");
    host = std::string(text.substr(1, close - 1));
    auto rest = text.substr(close + 1);
    if (!rest.empty()) {
      if (rest.front() != ':') return fail(why, "expected ':' after ']'");
      port_text = rest.substr(1);
      if (port_text.empty()) return fail(why, "empty port");
    }
    if (host.empty()) return fail(why, "empty IPv6 address");
  } else {
    auto colon = text.rfind(':');
    if (colon != std::string_view::npos) {
      if (text.find(':') != colon) return fail(why, "IPv6 addresses must be written in brackets, e.g. [::1]:7521");
      host = std::string(text.substr(0, colon));
      port_text = text.substr(colon + 1);
      if (port_text.empty()) return fail(why, "empty port");
    } else {
      host = std::string(text);
    }
  }
  if (!port_text.empty()) {
    unsigned value = 0;
    auto [ptr, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), value);
    if (ec != std::errc{} || ptr != port_text.data() + port_text.size() || (value == 0 && !allow_port_zero) ||
        value > 65535)
      return fail(why, allow_port_zero ? "port must be a number from 0 to 65535" : "port must be a number from 1 to 65535");
    port = static_cast<std::uint16_t>(value);
  }
  // Brackets only delimit an IPv6 address: one left in the host ("pxfer://[[]/x") would print as
  // a URL that no longer parses (found by fuzz/fuzz_url.cpp).
  for (char c : host)
    if (c == '/' || c == '@' || c == ' ' || c == '?' || c == '#' || c == '[' || c == ']')
      return fail(why, "invalid character in host");
  return true;
}

}  // namespace

std::string Url::authority() const {
  std::string h = host.find(':') != std::string::npos ? "[" + host + "]" : host;
  return h + ":" + std::to_string(port);
}

std::string Url::to_string() const { return std::string(scheme) + authority() + "/" + path; }

bool looks_like_url(std::string_view text) { return text.starts_with(scheme); }

std::optional<Url> parse_url(std::string_view text, std::string* why) {
  if (!text.starts_with(scheme)) {
    fail(why, "a remote location must start with pxfer://");
    return std::nullopt;
  }
  text.remove_prefix(scheme.size());
  auto slash = text.find('/');
  if (slash == std::string_view::npos) {
    fail(why, "missing path after host (pxfer://HOST:PORT/PATH)");
    return std::nullopt;
  }
  Url url;
  if (!parse_host_port(text.substr(0, slash), url.host, url.port, why, false)) return std::nullopt;
  if (url.host.empty()) {
    fail(why, "empty host");
    return std::nullopt;
  }
  // Exactly one '/' separates the authority from the path; the path is relative to the export
  // root. A second leading '/' (pxfer://h//etc/passwd) is kept so the server refuses it as absolute.
  url.path = std::string(text.substr(slash + 1));
  url.trailing_slash = url.path.empty() || url.path.back() == '/';
  return url;
}

std::optional<Endpoint> parse_endpoint(std::string_view text, std::string* why) {
  Endpoint ep;
  // Port 0 asks the kernel for any free port (tests and scripts read it back).
  if (!parse_host_port(text, ep.host, ep.port, why, true)) return std::nullopt;
  return ep;
}

}  // namespace pxfer
