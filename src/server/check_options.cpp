// pxferd --check-config: everything the server would refuse at start, found without serving or
// creating anything: the export root, the authentication policy, the tokens and access files
// (mode and owner), the certificate and key files, the listen address (resolved, bound and closed
// again), the state directory.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

#include "auth_tables.hpp"
#include "token_issuers.hpp"
#include "tpc_peers.hpp"
#include "pxfer/common/error.hpp"
#include "io/file_io.hpp"
#include "pxfer/server/server.hpp"
#include "pxfer/io/secret_file.hpp"
#include "pxfer/server/server_admin.hpp"

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

struct AddrInfo {
  addrinfo* list = nullptr;
  ~AddrInfo() {
    if (list) ::freeaddrinfo(list);
  }
};

}  // namespace

void check_bindable(const Endpoint& at, const std::string& option) {
  const std::string shown = option + " " + at.host + ":" + std::to_string(at.port);
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  AddrInfo found;
  if (int rc = ::getaddrinfo(at.host.c_str(), std::to_string(at.port).c_str(), &hints, &found.list); rc != 0)
    throw Error(Errc::usage, shown + ": the address does not resolve (" + ::gai_strerror(rc) +
                                 "); give an address of this host, e.g. 0.0.0.0:7521 or [::]:7521");
  // Bound as the server binds it (SO_REUSEADDR), then closed: only a listener makes this fail.
  int fd = ::socket(found.list->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw Error(errc_from_errno(errno), shown + ": cannot make a socket: " + errno_text(errno));
  const int on = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
  const int rc = ::bind(fd, found.list->ai_addr, found.list->ai_addrlen);
  const int err = errno;
  ::close(fd);
  if (rc == 0) return;
  if (err == EADDRINUSE)
    throw Error(Errc::usage, shown + ": the port is in use by another process (a pxferd already running? it is "
                                     "free once that one stops: ss -ltnp shows who listens)");
  if (err == EADDRNOTAVAIL) throw Error(Errc::usage, shown + ": not an address of this host; give one it has");
  throw Error(err == EACCES ? Errc::permission : Errc::usage,
              shown + ": cannot bind it: " + errno_text(err) + (err == EACCES ? " (ports below 1024 need root or CAP_NET_BIND_SERVICE)" : ""));
}

void check_server_options(const ServerOptions& o) {
  // Each file's error names its option, so that pxferd can say where in the config it was set.
  auto named = [](const char* option, auto&& load) {
    try {
      load();
    } catch (const Error& e) {
      throw Error(e.code(), std::string(option) + ": " + e.what());
    }
  };
  named("--root", [&] { Directory::open_root(o.root, true); });  // not a usable directory
  const bool any = !o.tokens_file.empty() || !o.client_ca_file.empty() || o.x509 || o.accepts_jwts() ||
                   o.anonymous_read;
  if (o.insecure_no_auth && !is_loopback(o.listen.host))
    throw Error(Errc::usage, "--insecure-no-auth is only allowed on a loopback address (127.0.0.1 or [::1]), not " +
                                 o.listen.host + "; give --tokens FILE or --client-ca FILE instead");
  if (!any && !o.insecure_no_auth)
    throw Error(Errc::usage, "no client authentication configured: give --tokens FILE (create one with "
                             "`pxferd token create NAME --tokens FILE`), --client-ca FILE, or --anonymous-read");
  named("--tokens", [&] { server::AuthFiles::load(o.tokens_file, ""); });
  named("--access", [&] { server::AuthFiles::load("", o.access_file); });
  readable(o.cert_file, "--cert");
  if (!o.key_file.empty()) check_protected_file(o.key_file, "--key", FileSecrecy::server_config);
  readable(o.client_ca_file, "--client-ca");
  if (o.x509 && !o.client_ca_file.empty())
    throw Error(Errc::usage, "--x509 and --client-ca do not go together (identities would be DNs for one CA and CNs "
                             "for the other): put the CA into --x509-ca-dir instead");
  if (o.x509) readable(o.x509_ca_dir, "--x509-ca-dir");
  if (o.accepts_jwts()) server::load_token_policy(o);
  server::PeerPolicy{o.tpc_allow};  // throws, naming the entry, for a malformed --tpc-allow
  check_bindable(o.listen, "--listen");
  if (!o.state_dir.empty() && o.cert_file.empty() && ::access(o.state_dir.c_str(), F_OK) == 0 &&
      ::access(o.state_dir.c_str(), W_OK | X_OK) != 0)
    throw Error(Errc::permission, "--state-dir " + o.state_dir + ": not writable by this user (the self-signed "
                                  "certificate is kept there): " + errno_text(errno));
}

}  // namespace pxfer
