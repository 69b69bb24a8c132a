#pragma once
// A token issuer's keys fetched over HTTPS (issuers without a key_file, docs/grid.md): its
// ISSUER/.well-known/openid-configuration names jwks_uri, whose JWKS holds the keys (RSA n/e and
// EC P-256/384/521 x/y, each made into a PEM public key with OpenSSL 3, selected by kid). Cached
// for limits::jwks_refresh, kept at most limits::jwks_max_age while refreshes fail, fetched again
// for an unknown kid at most once per limits::jwks_min_refetch. Fail-closed: without keys the
// issuer's tokens are refused, and every failed fetch is one error line in the log.
#include "pxfer/server/layer.hpp"
#include <chrono>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace pxfer::server {

struct JwkSet {
  std::map<std::string, std::vector<std::string>> by_kid;  // PEM public keys by kid ("" = those without one)
  std::vector<std::string> all;                            // every usable key, kid or not
  std::size_t skipped = 0;                                 // keys of other types or uses
};

// The signing keys of a JWKS document; throws Error(network) for a document that is not one.
JwkSet parse_jwks(const std::string& json_text);

class IssuerKeys {
 public:
  IssuerKeys(std::string issuer_url, std::string https_ca_file);
  // The keys a token with key id `kid` ("" = none given: every key) may be verified with (a kid
  // the JWKS lacks: its keys without a kid),
  // fetching first when needed (the first token of the issuer after a start or reload fetches:
  // that login waits for it, at most twice limits::jwks_fetch_timeout, while other logins of the
  // issuer go on with the keys in force, or are refused at once when there are none yet). Throws
  // Error(permission) naming why when there are no keys.
  std::vector<std::string> keys_for(const std::string& kid);

 private:
  void fetch(std::chrono::steady_clock::time_point now);
  std::vector<std::string> keys_in_force(const std::string& kid, std::chrono::steady_clock::time_point now);  // locked

  const std::string issuer_, ca_file_;
  std::mutex mutex_;
  JwkSet keys_;
  bool have_keys_ = false, tried_ = false, fetching_ = false;
  std::chrono::steady_clock::time_point fetched_at_, tried_at_;
  std::string last_error_;
};

}  // namespace pxfer::server
