#pragma once
// WLCG / SciTokens JWT bearer tokens (docs/grid.md), checked without the network: the issuer must
// be one the operator listed (token_issuers.hpp) and the signature one of its keys' (RS256/384/512
// with an RSA key, ES256/384/512 with an EC key: libjwt checks it, after this file refused `none`,
// HMAC and any algorithm the key cannot have made); exp, nbf, iat and aud as the WLCG Common JWT
// Profile says; the storage.* scopes become grants below the issuer's base path.
#include "pxfer/server/layer.hpp"
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "auth.hpp"
#include "jwks.hpp"
#include "pxfer/server/server.hpp"

namespace pxfer::server {

// An issuer as trusted: its configuration (base_path normalized, "" = the export root; audiences
// with those the --token-issuers file gives every issuer) and its keys.
struct TokenIssuer : TokenIssuerConfig {
  std::vector<std::string> keys_pem;  // read from key_file
  std::shared_ptr<IssuerKeys> jwks;   // without a key_file: the keys its JWKS serves (jwks.hpp)
};

struct TokenPolicy {
  std::vector<TokenIssuer> issuers;
  bool empty() const { return issuers.empty(); }
};

struct BearerIdentity {
  std::string issuer, subject;
  std::string id;                   // jti, else a hash of the token: what logs may show
  std::vector<std::string> groups;  // wlcg.groups
  std::vector<Grant> grants;        // from the scopes, below the issuer's base path
  std::vector<std::string> ignored_scopes;  // storage.stage and scopes pxfer does not know
};

// Three base64url parts, the first a JSON object: a JWT, not a pxfer token (64 hex digits).
bool looks_like_jwt(const std::string& token);

// Verifies `token` at `now`; throws Error(permission) with one line saying why it is refused
// (never the token itself).
BearerIdentity verify_bearer_token(const std::string& token, const TokenPolicy& policy,
                                   std::chrono::system_clock::time_point now);

// The grants of WLCG storage scopes ("storage.read:/data storage.create:/data/in"), each path below
// `base_path`; storage.stage and unknown scopes go to `ignored`. A scope path with ".." is refused.
std::vector<Grant> grants_of_scopes(const std::string& scope, const std::string& base_path,
                                    std::vector<std::string>& ignored);

}  // namespace pxfer::server
