#include "authenticator.hpp"

#include <boost/asio/ip/address.hpp>

#include <spdlog/spdlog.h>

#include "grid_auth.hpp"
#include "token_issuers.hpp"

namespace pxfer::server {
namespace {

// The issuer URLs of `of` that `in` lacks, comma-separated, or "none".
std::string issuers_missing(const TokenPolicy* of, const TokenPolicy* in) {
  std::string out;
  if (of)
    for (const auto& i : of->issuers) {
      bool kept = false;
      if (in)
        for (const auto& j : in->issuers) kept = kept || j.url == i.url;
      if (!kept) out += (out.empty() ? "" : ",") + i.url;
    }
  return out.empty() ? "none" : out;
}

void log_issuer_changes(const TokenPolicy* before, const TokenPolicy* after) {
  if (!before && !after) return;
  spdlog::info("reloaded: token issuers {} (added: {}; removed: {})", after ? after->issuers.size() : 0,
               issuers_missing(after, before), issuers_missing(before, after));
}

}  // namespace

std::uint8_t SessionRights::wire_rights() const {
  std::uint8_t rights = 0;
  for (const auto& g : grants) rights |= (g.read ? wire::right_read : 0) | (g.write ? wire::right_write : 0);
  return rights;
}

Authenticator::Authenticator(const ServerOptions& options) : options_(options) {
  tables_.set(AuthFiles::load(options.tokens_file, options.access_file));
  if (options.accepts_jwts()) token_policy_ = std::make_shared<const TokenPolicy>(load_token_policy(options));
}

void Authenticator::reload(const ServerOptions& next) {
  // Everything is read before anything changes: a bad file leaves the old settings in force.
  std::shared_ptr<const TokenPolicy> policy;
  if (next.accepts_jwts()) policy = std::make_shared<const TokenPolicy>(load_token_policy(next));
  reload_auth(tables_, {options_.tokens_file, options_.access_file}, {next.tokens_file, next.access_file});
  const auto before = token_policy();
  {
    std::lock_guard lock(policy_mutex_);
    token_policy_ = policy;
  }
  log_issuer_changes(before.get(), policy.get());
  live_.reloaded();
}

std::shared_ptr<const TokenPolicy> Authenticator::token_policy() const {
  std::lock_guard lock(policy_mutex_);
  return token_policy_;
}

SessionRights Authenticator::recheck(const SessionRights& rights) const {
  if (rights.via == SessionRights::Via::grant) return rights;
  const auto f = tables_.get();
  auto revoked = [&](const std::string& why) {
    return Error(Errc::permission, "credential revoked by the server's reload: " + why + " (identity " + rights.identity + ")");
  };
  if (rights.via == SessionRights::Via::token && !(f->tokens && rights.token && f->tokens->holds(*rights.token)))
    throw revoked("the token is no longer in the tokens file");
  SessionRights next;
  try {
    next = rights_for(*f, rights.identity, rights.via == SessionRights::Via::anonymous);
  } catch (const Error&) {
    throw revoked("no line of the access file names it any more");
  }
  next.via = rights.via;
  next.token = rights.token;
  return next;
}

void Authenticator::check_policy(const std::string& listen_address) const {
  const bool any = !options_.tokens_file.empty() || !options_.client_ca_file.empty() || options_.x509 ||
                   options_.accepts_jwts() || options_.anonymous_read;
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
  SessionRights s;
  s.identity = name;
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
  if (t && !t->peer_fingerprint.empty() && (!options_.client_ca_file.empty() || options_.x509)) {
    if (!t->peer_verified) {
      spdlog::warn("client={} certificate refused: {}", conn.peer(), t->verify_error);
      throw Error(Errc::permission, "client certificate refused: " + t->verify_error +
                                        (options_.x509 ? " (checked against the server's --x509-ca-dir and its CRLs)"
                                                       : " (it is not signed by the server's --client-ca)"));
    }
    if (options_.x509) {
      SessionRights s = x509_session_rights(*f, *t, options_.voms_dir, options_.x509_ca_dir);
      spdlog::debug("client={} identity={} authenticated by X.509 ({} proxies)", conn.peer(), s.identity, t->peer_proxies);
      return s;
    }
    if (!valid_identity_name(t->peer_cn) || reserved_identity_name(t->peer_cn))
      throw Error(Errc::permission, "client certificate refused: its subject CN is not a valid identity name");
    spdlog::debug("client={} identity={} authenticated by certificate {}", conn.peer(), t->peer_cn, t->peer_fingerprint);
    SessionRights s = rights_for(*f, t->peer_cn, false);
    s.via = SessionRights::Via::certificate;
    return s;
  }
  const auto policy = token_policy();
  if (!auth.token.empty() && policy && looks_like_jwt(auth.token)) {
    try {
      BearerIdentity id = verify_bearer_token(auth.token, *policy, std::chrono::system_clock::now());
      SessionRights s = token_session_rights(*f, id);
      spdlog::debug("client={} identity={} authenticated by bearer token {}", conn.peer(), s.identity, id.id);
      return s;
    } catch (const Error& e) {
      spdlog::warn("client={} {} ({})", conn.peer(), e.what(), log_safe_token_id(auth.token));
      throw;
    }
  }
  if (!auth.token.empty()) {
    std::optional<TokenEntry> entry;
    if (f->tokens) entry = f->tokens->entry_of(auth.token);
    if (!entry) {
      spdlog::warn("client={} authentication failed: unknown token ({})", conn.peer(), log_safe_token_id(auth.token));
      throw Error(Errc::permission, "authentication failed: the token is not valid on this server "
                                    "(check --token-file or PXFER_TOKEN)");
    }
    spdlog::debug("client={} identity={} authenticated by token", conn.peer(), entry->name);
    SessionRights s = rights_for(*f, entry->name, false);
    s.via = SessionRights::Via::token;
    s.token = std::move(entry);
    return s;
  }
  if (options_.insecure_no_auth || options_.anonymous_read) {
    SessionRights s = rights_for(*f, "anonymous", true);
    s.via = SessionRights::Via::anonymous;
    return s;
  }
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
