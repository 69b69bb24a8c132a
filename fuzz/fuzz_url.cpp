// libFuzzer target: the URL and endpoint parsers (pxfer://HOST:PORT/PATH, HOST:PORT). A URL that
// parses must print as a URL that parses back to the same host, port and path.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "pxfer/common/url.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  std::string why;
  (void)pxfer::looks_like_url(text);
  if (auto url = pxfer::parse_url(text, &why)) {
    if (url->host.empty() || url->port == 0) std::abort();
    const std::string printed = url->to_string();
    auto again = pxfer::parse_url(printed, &why);
    if (!again || again->host != url->host || again->port != url->port || again->path != url->path ||
        again->trailing_slash != url->trailing_slash)
      std::abort();
  } else if (why.empty()) {
    std::abort();  // every refusal says why
  }
  why.clear();
  if (auto ep = pxfer::parse_endpoint(text, &why)) {
    (void)ep;
  } else if (why.empty()) {
    std::abort();
  }
  return 0;
}
