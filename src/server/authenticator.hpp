#pragma once
// Who a client is and what it may touch: the server's authentication policy (which credentials it
// accepts, refusing to run open to the world), a control session's identity and grants after AUTH,
// and the check of each request's path. The tokens and access files can be replaced while the
// server runs (reload): the sessions of a revoked credential end, the others are held to the new
// files from their next request (issue 34).
#include "pxfer/server/layer.hpp"
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "auth.hpp"
#include "auth_tables.hpp"
#include "bearer_token.hpp"
#include "live_sessions.hpp"
#include "net/connection.hpp"
#include "pxfer/common/error.hpp"
#include "pxfer/server/server.hpp"
#include "wire/wire.hpp"

namespace pxfer::server {

// What a control session may do, decided at AUTH and again after each reload.
struct SessionRights {
  // A token's or certificate's name, or a grid user's DN with its first VOMS FQAN in brackets:
  // "/DC=org/DC=example/CN=Jane Doe (/atlas/Role=production)".
  // How the session logged in, for a reload to decide its rights again (Authenticator::recheck).
  enum class Via : std::uint8_t { grant, certificate, token, anonymous };
  std::string identity;
  std::vector<Grant> grants;
  std::uint8_t wire_rights() const;  // wire::right_read | wire::right_write, for AUTH_OK
  // Set when the session logged in with a third-party copy grant (tpc_grants.hpp): it may make
  // only the one OPEN the grant names.
  std::optional<TpcScope> tpc;
  // A grid proxy's VOMS attributes (voms_attributes.hpp); empty otherwise.
  std::string vo;
  std::vector<std::string> fqans;
  Via via = Via::grant;
  std::optional<TokenEntry> token;  // Via::token: the tokens-file entry it matched (not the token)
};

class Authenticator {
 public:
  // Loads the tokens and access files the options name.
  explicit Authenticator(const ServerOptions& options);

  // Throws Error(usage) when the options would serve without client authentication on a
  // non-loopback `listen` address.
  void check_policy(const std::string& listen_address) const;

  // A verified client certificate, else a token, else anonymous where allowed; throws
  // Error(permission) with the reason the client is told.
  SessionRights authenticate(const net::Connection& conn, const wire::Auth& auth) const;

  // Nothing when `rights` allow reading (or writing) `path`, else the refusal to send.
  static std::optional<Error> authorize(const SessionRights& rights, const std::string& path, bool write);

  // Reads the tokens and access files and the token issuers `next` names instead (SIGHUP); on an
  // error keeps the ones in force and throws it (auth_tables.hpp: reload_auth). A removed issuer's
  // tokens are refused from the next login on.
  void reload(const ServerOptions& next);

  // The rights of a session that logged in as `rights` says, under the files in force now: the
  // same, narrower or wider grants. Throws Error(permission, "credential revoked by the server's
  // reload: ...") when its token or certificate identity lost every access line, or its token's
  // line was removed. A grant's session keeps its one transfer.
  SessionRights recheck(const SessionRights& rights) const;
  // Changes with every reload that swapped the files in.
  std::uint64_t generation() const { return tables_.generation(); }
  // The sessions logged in now: a reload runs their callbacks.
  LiveSessions& live() const { return live_; }

 private:
  SessionRights rights_for(const AuthFiles& files, const std::string& name, bool anonymous) const;

  std::shared_ptr<const TokenPolicy> token_policy() const;

  const ServerOptions options_;
  AuthTables tables_;
  mutable std::mutex policy_mutex_;
  std::shared_ptr<const TokenPolicy> token_policy_;  // token issuers: WLCG JWTs are accepted; swapped by reload
  mutable LiveSessions live_;
};

}  // namespace pxfer::server
