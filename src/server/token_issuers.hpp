#pragma once
// pxferd --token-issuers FILE: the token issuers a site trusts, in TOML (docs/grid.md):
//
//   audience = ["https://se.example.org:4044", "se.example.org"]   # aud values this server accepts
//   accept_any_audience = false          # also "https://wlcg.cern.ch/jwt/v1/any"
//   [[issuer]]
//   url = "https://wlcg.cloud.cnaf.infn.it/"   # the iss claim, exactly
//   base_path = "/atlas"                       # scope paths are below this export subpath
//   key_file = "/etc/pxferd/cnaf-keys.pem"     # the issuer's public keys, PEM ("" = JWKS over HTTPS)
//   audience = [...]                           # this issuer's own aud values, beside the file's
#include "pxfer/server/layer.hpp"
#include <string>

#include "bearer_token.hpp"

namespace pxfer::server {

// The issuers of the --token-issuers file, unchecked. Throws Error(usage) naming the file for a
// file that cannot be read or is not TOML, or has no [[issuer]] entry.
std::vector<TokenIssuerConfig> read_token_issuers(const std::string& path);

// Every issuer the options name (the --token-issuers file's, then pxferd.toml's [[issuer]] tables),
// with its keys. Throws Error(usage) with one line naming the file and the entry ("FILE [[issuer]]
// #N: ...") for an issuer without url or audience, a base_path with '..', a key file without a PEM
// public key in it, or an issuer listed twice.
TokenPolicy load_token_policy(const ServerOptions& options);

}  // namespace pxfer::server
