#pragma once
// The rights of grid identities (docs/grid.md): an X.509 user by DN and VOMS FQANs, a WLCG token
// by its storage scopes and by `token:SUBJECT@ISSUER` / `group:/GROUP` lines of the access file.
// Both fail closed: no matching line and no scope, no access.
#include "pxfer/server/layer.hpp"
#include <string>

#include "auth_tables.hpp"
#include "authenticator.hpp"
#include "bearer_token.hpp"
#include "net/connection.hpp"

namespace pxfer::server {

// A verified grid chain (tls.peer_verified): its DN's lines and those of its FQANs. Throws
// Error(permission) for an AC that does not verify or an identity without a line.
SessionRights x509_session_rights(const AuthFiles& files, const net::TlsInfo& tls, const std::string& voms_dir,
                                  const std::string& ca_dir);

// A verified token (bearer_token.hpp): its scopes, below its issuer's base path, and the access
// lines naming it or one of its wlcg.groups. Throws Error(permission) when that is nothing.
SessionRights token_session_rights(const AuthFiles& files, const BearerIdentity& token);

}  // namespace pxfer::server
