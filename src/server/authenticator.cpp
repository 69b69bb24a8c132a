#include "authenticator.hpp"

#include <boost/asio/ip/address.hpp>

#include <spdlog/spdlog.h>

namespace pxfer::server {

std::uint8_t SessionRights::wire_rights() const {
  std::uint8_t rights = 0;
  for (const auto& g : grants) rights |= g.write ? (wire::right_read | wire::right_write) : wire::right_read;
  return rights;
}

Authenticator::Authenticator(const ServerOptions& options) : options_(options) {
  tables_.set(AuthFiles::load(options.tokens_file, options.access_file));
}

void Authenticator::reload(const std::string& tokens_file, const std::string& access_file) {
  reload_auth(tables_, {options_.tokens_file, options_.access_file}, {tokens_file, access_file});
}

void Authenticator::check_policy(const std::string& listen_address) const {
  const bool any = !options_.tokens_file.empty() || !options_.client_ca_file.empty() || options_.anonymous_read;
  boost::system::error_code ec;
  const auto address = boost::asio::ip::make_address(listen_address, ec);
  if (options_.insecure_no_auth && (ec || !address.is_loopback()))
    throw Error(Errc::usage, "--insecure-no-auth is only allowed on a loopback address (127.0.0.1 or [::1]); "
                             "give --tokens FILE or --client-ca FILE to listen on " + listen_address);
  if (!any && !options_.insecure_no_auth)
    throw Error(Errc::usage, "no client authentication configured: give --tokens FILE (create one with "
                             "`pxferd token create NAME --tokens FILE`), --client-ca FILE, or --anonymous-read; "
                             "--insecure-no-auth allows anonymous read-write on a loopback address only");
}

// With an access file, an identity has exactly the lines that name it: anonymous too (fail
// closed), and anonymous only ever reads unless the whole server is --insecure-no-auth. Without
// one, every authenticated identity may read and write everything.
SessionRights Authenticator::rights_for(const AuthFiles& files, const std::string& name, bool anonymous) const {
  SessionRights s{.identity = name, .grants = {}, .tpc = std::nullopt};
  if (files.access) {
    s.grants = files.access->grants_of(name);
    if (anonymous && !options_.insecure_no_auth)
      for (auto& g : s.grants) g.write = false;
  } else {
    s.grants.push_back(Grant{"", !anonymous || options_.insecure_no_auth});
  }
  if (s.grants.empty())
    throw Error(Errc::permission, "identity " + name + " has no access on this server (not in its access file)");
  return s;
}

SessionRights Authenticator::authenticate(const net::Connection& conn, const wire::Auth& auth) const {
  const auto f = tables_.get();
  const net::TlsInfo* t = conn.tls();
  if (t && !t->peer_fingerprint.empty() && !options_.client_ca_file.empty()) {
    if (!t->peer_verified)
      throw Error(Errc::permission, "client certificate refused: " + t->verify_error +
                                        " (it is not signed by the server's --client-ca)");
    if (!valid_identity_name(t->peer_cn) || reserved_identity_name(t->peer_cn))
      throw Error(Errc::permission, "client certificate refused: its subject CN is not a valid identity name");
    spdlog::debug("client={} identity={} authenticated by certificate {}", conn.peer(), t->peer_cn, t->peer_fingerprint);
    return rights_for(*f, t->peer_cn, false);
  }
  if (!auth.token.empty()) {
    std::optional<std::string> name;
    if (f->tokens) name = f->tokens->identify(auth.token);
    if (!name) {
      spdlog::warn("client={} authentication failed: unknown token ({})", conn.peer(), log_safe_token_id(auth.token));
      throw Error(Errc::permission, "authentication failed: the token is not valid on this server "
                                    "(check --token-file or PXFER_TOKEN)");
    }
    spdlog::debug("client={} identity={} authenticated by token", conn.peer(), *name);
    return rights_for(*f, *name, false);
  }
  if (options_.insecure_no_auth || options_.anonymous_read) return rights_for(*f, "anonymous", true);
  spdlog::warn("client={} refused: no credentials", conn.peer());
  throw Error(Errc::permission, "authentication required: give a token (--token-file FILE or the PXFER_TOKEN "
                                "variable) or a client certificate (--cert FILE --key FILE)");
}

std::optional<Error> Authenticator::authorize(const SessionRights& s, const std::string& path, bool write) {
  if (allowed(s.grants, path, write)) return std::nullopt;
  // A path with "..": with rights over the whole root, confinement to the root decides (and
  // says why); with narrower grants it could climb out of one, so it is refused here.
  if (!normalize_request_path(path)) {
    if (allowed(s.grants, "", write)) return std::nullopt;
    return Error(Errc::permission, path + ": refused: '..' is not allowed in paths on this server");
  }
  return Error(Errc::permission, "identity " + s.identity + " may not " + (write ? "write " : "read ") +
                                     (path.empty() ? "/" : path) + " on this server" +
                                     (write && allowed(s.grants, path, false) ? " (read-only access)" : ""));
}

}  // namespace pxfer::server
