// pxferd --check-config: everything the server would refuse at start, found without binding the
// port or creating anything: the export root, the authentication policy, the tokens and access
// files, the certificate files.
#include <arpa/inet.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include "auth_tables.hpp"
#include "token_issuers.hpp"
#include "tpc_peers.hpp"
#include "pxfer/error.hpp"
#include "io/file_io.hpp"
#include "pxfer/server.hpp"
#include "pxfer/server_admin.hpp"

namespace pxfer {
namespace {

bool is_loopback(const std::string& host) {
  in_addr v4{};
  in6_addr v6{};
  if (::inet_pton(AF_INET, host.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
  if (::inet_pton(AF_INET6, host.c_str(), &v6) == 1) return IN6_IS_ADDR_LOOPBACK(&v6);
  return false;
}

void readable(const std::string& file, const char* option) {
  if (file.empty()) return;
  int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw Error(errc_from_errno(errno), std::string(option) + " " + file + ": " + errno_text(errno));
  ::close(fd);
}

}  // namespace

void check_server_options(const ServerOptions& o) {
  Directory::open_root(o.root, true);  // throws, naming --root, when it is not a usable directory
  const bool any = !o.tokens_file.empty() || !o.client_ca_file.empty() || o.x509 || !o.token_issuers_file.empty() ||
                   o.anonymous_read;
  if (o.insecure_no_auth && !is_loopback(o.listen.host))
    throw Error(Errc::usage, "--insecure-no-auth is only allowed on a loopback address (127.0.0.1 or [::1]), not " +
                                 o.listen.host + "; give --tokens FILE or --client-ca FILE instead");
  if (!any && !o.insecure_no_auth)
    throw Error(Errc::usage, "no client authentication configured: give --tokens FILE (create one with "
                             "`pxferd token create NAME --tokens FILE`), --client-ca FILE, or --anonymous-read");
  server::AuthFiles::load(o.tokens_file, o.access_file);
  readable(o.cert_file, "--cert");
  readable(o.key_file, "--key");
  readable(o.client_ca_file, "--client-ca");
  if (o.x509 && !o.client_ca_file.empty())
    throw Error(Errc::usage, "--x509 and --client-ca do not go together (identities would be DNs for one CA and CNs "
                             "for the other): put the CA into --x509-ca-dir instead");
  if (o.x509) readable(o.x509_ca_dir, "--x509-ca-dir");
  if (!o.token_issuers_file.empty()) server::load_token_issuers(o.token_issuers_file);
  server::PeerPolicy{o.tpc_allow};  // throws, naming the entry, for a malformed --tpc-allow
}

}  // namespace pxfer
