// pxferd check-credential (include/pxfer/server/server_admin.hpp): the same checks a connection meets,
// on a proxy or token file, with what they decided and why.
#include <unistd.h>

#include <cerrno>
#include <cstdlib>

#include "auth_tables.hpp"
#include "grid_auth.hpp"
#include "net/grid_x509.hpp"
#include "pxfer/common/error.hpp"
#include "pxfer/server/server.hpp"
#include "pxfer/server/server_admin.hpp"
#include "token_issuers.hpp"

namespace pxfer {
namespace {

std::string rights_text(const server::SessionRights& s) {
  std::string out;
  for (const auto& g : s.grants)
    out += "  /" + g.path + (g.read ? " read" : "") + (g.write ? " write" : "") + "\n";
  return out;
}

std::string check_token(const ServerOptions& o, const server::AuthFiles& files, const std::string& token) {
  if (!o.accepts_jwts())
    throw Error(Errc::usage, "this is a JWT, but no token issuer is configured (--token-issuers, [[issuer]]): the "
                             "server would refuse it");
  const auto policy = server::load_token_policy(o);
  const auto id = server::verify_bearer_token(token, policy, std::chrono::system_clock::now());
  const auto s = server::token_session_rights(files, id);
  std::string out = "credential: WLCG token " + id.id + ", issuer " + id.issuer + " (signature, exp/nbf/iat and aud verified)\n";
  out += "identity: " + s.identity + "\n";
  for (const auto& g : id.groups) out += "group: " + g + "\n";
  for (const auto& i : id.ignored_scopes) out += "ignored scope: " + i + "\n";
  return out + "rights (scopes below the issuer's base path, then access-file lines):\n" + rights_text(s);
}

// verify_grid_file on the text (which may have come from stdin), through a private temporary file.
net::ChainVerdict verify_pem(const std::string& ca_dir, const std::string& pem) {
  char name[] = "/tmp/pxferd-check-credential-XXXXXX";
  int fd = ::mkstemp(name);  // mode 0600: a proxy holds its private key
  if (fd < 0) throw Error(Errc::local_io, std::string("cannot make a temporary file in /tmp: ") + errno_text(errno));
  const bool written = ::write(fd, pem.data(), pem.size()) == static_cast<ssize_t>(pem.size());
  ::close(fd);
  struct Unlink {
    const char* path;
    ~Unlink() { ::unlink(path); }
  } unlink_after{name};
  if (!written) throw Error(Errc::local_io, std::string("cannot write ") + name);
  return net::verify_grid_file(ca_dir, name);
}

std::string check_x509(const ServerOptions& o, const server::AuthFiles& files, const std::string& pem) {
  if (!o.x509) throw Error(Errc::usage, "this is a certificate, but --x509 is off: the server would not take it");
  const auto verdict = verify_pem(o.x509_ca_dir, pem);
  if (!verdict.verified)
    throw Error(Errc::permission, "client certificate refused: " + verdict.error + " (against --x509-ca-dir " +
                                      o.x509_ca_dir + ")");
  net::TlsInfo tls;
  tls.peer_verified = true;
  tls.peer_dn = verdict.dn;
  tls.peer_proxies = verdict.proxies;
  tls.peer_chain_pem = pem;
  const auto s = server::x509_session_rights(files, tls, o.voms_dir, o.x509_ca_dir);
  std::string out = "credential: X.509, " + std::to_string(verdict.proxies) + " prox" +
                    (verdict.proxies == 1 ? "y" : "ies") + " above the user certificate (chain and CRLs verified)\n";
  out += "identity: " + s.identity + "\n";
  if (!s.vo.empty()) out += "vo: " + s.vo + "\n";
  for (const auto& f : s.fqans) out += "fqan: " + f + "\n";
  return out + "rights (DN and FQAN lines of the access file):\n" + rights_text(s);
}

}  // namespace

std::string check_credential(const ServerOptions& options, const std::string& text) {
  const auto files = server::AuthFiles::load("", options.access_file);
  std::string trimmed = text;
  trimmed.erase(0, trimmed.find_first_not_of(" \t\r\n"));
  trimmed.erase(trimmed.find_last_not_of(" \t\r\n") + 1);
  if (server::looks_like_jwt(trimmed)) return check_token(options, files, trimmed);
  if (text.find("-----BEGIN CERTIFICATE-----") != std::string::npos) return check_x509(options, files, text);
  throw Error(Errc::usage, "not a credential pxferd knows: expected a JWT or a PEM proxy/certificate");
}

}  // namespace pxfer
