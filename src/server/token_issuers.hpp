#pragma once
// pxferd --token-issuers FILE: the token issuers a site trusts, in TOML (docs/grid.md):
//
//   audience = ["https://se.example.org:4044", "se.example.org"]   # aud values this server accepts
//   accept_any_audience = false          # also "https://wlcg.cern.ch/jwt/v1/any"
//   [[issuer]]
//   url = "https://wlcg.cloud.cnaf.infn.it/"   # the iss claim, exactly
//   base_path = "/atlas"                       # scope paths are below this export subpath
//   key_file = "/etc/pxferd/cnaf-keys.pem"     # the issuer's public keys, PEM
#include "pxfer/server/layer.hpp"
#include <string>

#include "bearer_token.hpp"

namespace pxfer::server {

// Throws Error(usage) naming the file and what is wrong (no issuer, an issuer without keys, a key
// file without a PEM public key in it, no audience and no accept_any_audience).
TokenPolicy load_token_issuers(const std::string& path);

}  // namespace pxfer::server
