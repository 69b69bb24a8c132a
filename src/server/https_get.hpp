#pragma once
// One HTTPS GET for pxferd's own needs (a token issuer's openid-configuration and JWKS), with
// Boost.Beast over OpenSSL: TLS 1.2 or later, the server's chain verified against `ca_file` (""
// = the system's CA store) and its host name checked, one deadline for the whole exchange, a
// bounded answer. Nothing here runs on the server's network threads' executors.
#include "pxfer/server/layer.hpp"
#include <chrono>
#include <cstddef>
#include <string>

namespace pxfer::server {

// The body of a 200 answer to GET `url` (https://HOST[:PORT]/PATH). Throws Error(network) with one
// line naming the URL and why (not https, cannot connect, the certificate does not verify, timed
// out, not 200, over `max_bytes`).
std::string https_get(const std::string& url, const std::string& ca_file, std::chrono::milliseconds timeout,
                      std::size_t max_bytes);

}  // namespace pxfer::server
