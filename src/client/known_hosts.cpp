#include "known_hosts.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <sstream>

#include "net/tls.hpp"
#include "pxfer/common/error.hpp"

namespace pxfer {

std::vector<KnownHost> parse_known_hosts(const std::string& text) {
  std::vector<KnownHost> out;
  std::istringstream in(text);
  std::string line;
  unsigned number = 0;
  while (std::getline(in, line)) {
    ++number;
    std::istringstream words(line);
    std::string authority, fp, extra;
    if (!(words >> authority) || authority[0] == '#') continue;
    if (!(words >> fp) || (words >> extra)) continue;
    std::string normal = net::normalize_fingerprint(fp);
    if (normal.empty() || authority.find(':') == std::string::npos) continue;
    out.push_back(KnownHost{authority, normal, number});
  }
  return out;
}

HostCheck check_known_host(const std::vector<KnownHost>& hosts, const std::string& authority,
                           const std::string& fingerprint) {
  for (const auto& h : hosts)
    if (h.authority == authority) return HostCheck{h.fingerprint == fingerprint ? HostMatch::pinned : HostMatch::changed, h};
  return HostCheck{};
}

namespace {
void make_parent_dirs(const std::string& file) {
  auto slash = file.rfind('/');
  if (slash == std::string::npos || slash == 0) return;
  std::string dir = file.substr(0, slash);
  std::size_t pos = 0;
  while (pos < dir.size()) {
    auto next = dir.find('/', pos + 1);
    if (next == std::string::npos) next = dir.size();
    std::string partial = dir.substr(0, next);
    if (!partial.empty()) ::mkdir(partial.c_str(), 0700);  // errors surface at open()
    pos = next;
  }
}
}  // namespace

std::optional<std::string> trust_on_first_use(const std::string& file, const std::string& authority,
                                              const std::string& fingerprint) {
  make_parent_dirs(file);
  int fd = ::open(file.c_str(), O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (fd < 0) throw Error(Errc::local_io, "cannot open known-hosts file " + file + ": " + errno_text(errno));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  ::flock(fd, LOCK_EX);  // files transferred at once (-c) pin a new server once
  std::string text;
  char buf[8192];
  ssize_t n;
  ::lseek(fd, 0, SEEK_SET);
  while ((n = ::read(fd, buf, sizeof buf)) > 0) text.append(buf, static_cast<std::size_t>(n));
  HostCheck check = check_known_host(parse_known_hosts(text), authority, fingerprint);
  if (check.match == HostMatch::pinned) return std::nullopt;
  if (check.match == HostMatch::changed)
    throw Error(Errc::permission,
                "WARNING: the certificate of " + authority + " has CHANGED: pinned " + check.entry.fingerprint +
                    ", now " + fingerprint + ". Someone may be intercepting the connection, or the server got a new "
                    "key. Refusing to connect. If the change is expected (compare with `pxferd fingerprint` on the "
                    "server), delete line " + std::to_string(check.entry.line) + " of " + file + " and retry");
  std::string line = (text.empty() || text.back() == '\n' ? "" : "\n") + authority + " " + fingerprint + "\n";
  if (::write(fd, line.data(), line.size()) != static_cast<ssize_t>(line.size()))
    throw Error(Errc::local_io, "cannot write known-hosts file " + file + ": " + errno_text(errno));
  return "first connection to " + authority + ": trusting its certificate " + fingerprint + " and pinning it in " +
         file + " (compare with `pxferd fingerprint` on the server)";
}

}  // namespace pxfer
