#include <linux/sockios.h>
#include <netinet/in.h>
#include <linux/tcp.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>

#include <fstream>

#include "pxfer/common/error.hpp"
#include "pxfer/io/socket_tuning.hpp"
#include "pxfer/common/units.hpp"
#include "pxfer/core/limits.hpp"

namespace pxfer {
namespace {
std::uint32_t get_int(int fd, int level, int name) {
  int v = 0;
  socklen_t len = sizeof v;
  if (::getsockopt(fd, level, name, &v, &len) != 0) return 0;
  return static_cast<std::uint32_t>(v);
}
}  // namespace

std::string available_congestion_controls() {
  std::ifstream in("/proc/sys/net/ipv4/tcp_available_congestion_control");
  std::string line;
  std::getline(in, line);
  return line;
}

const std::string& system_congestion_control() {
  // Read once per process: a get -r of 10,000 small files opened and parsed this /proc file
  // 10,000 times (1.4 % of the client's CPU, docs/performance.md section 5).
  static const std::string name = [] {
    std::ifstream in("/proc/sys/net/ipv4/tcp_congestion_control");
    std::string text;
    in >> text;
    return text;
  }();
  return name;
}

std::string congestion_of(int fd) {
  char name[16] = {};
  socklen_t len = sizeof name;
  if (::getsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, name, &len) != 0) return {};
  return std::string(name, strnlen(name, sizeof name));
}

BufferGrant tune_socket(int fd, const SocketTuning& tuning) {
  if (!tuning.congestion.empty() &&
      ::setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, tuning.congestion.data(),
                   static_cast<socklen_t>(tuning.congestion.size())) != 0) {
    int err = errno;
    std::string why = err == ENOENT ? "unknown" : err == EPERM ? "not allowed for unprivileged users" : errno_text(err);
    throw Error(Errc::usage, "congestion control '" + tuning.congestion + "': " + why + "; available: " +
                                 available_congestion_controls() + " (net.ipv4.tcp_available_congestion_control)");
  }
  // A sender's socket holds at most this much not yet sent: the rest of a block waits in the
  // stream, and the next block goes to whichever stream can send it. Without it autotuning let
  // each stream queue up to tcp_wmem's 4 MiB, so the last blocks of a file sat behind slow streams
  // (1 GiB, 32 streams, 50 ms, 0.01 %: 3 MiB unsent on streams moving 1.4 MB/s, a 2-3 s tail).
  {
    int v = static_cast<int>(limits::data_notsent_lowat);
    ::setsockopt(fd, IPPROTO_TCP, TCP_NOTSENT_LOWAT, &v, sizeof v);
  }
  if (tuning.window_clamp > 0) {
    int v = static_cast<int>(tuning.window_clamp);
    ::setsockopt(fd, IPPROTO_TCP, TCP_WINDOW_CLAMP, &v, sizeof v);
  }
  return apply_window(fd, tuning.window);
}

BufferGrant apply_window(int fd, std::uint32_t window) {
  if (window > 0) {
    int v = static_cast<int>(window);
    ::setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &v, sizeof v);
    ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &v, sizeof v);
  }
  return read_buffers(fd, window);
}

std::uint32_t pin_send_buffer(int fd, std::uint32_t bytes) {
  int v = static_cast<int>(bytes);
  ::setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &v, sizeof v);
  return get_int(fd, SOL_SOCKET, SO_SNDBUF);
}

BufferGrant read_buffers(int fd, std::uint32_t requested) {
  BufferGrant g;
  g.requested = requested;
  g.sndbuf = get_int(fd, SOL_SOCKET, SO_SNDBUF);
  g.rcvbuf = get_int(fd, SOL_SOCKET, SO_RCVBUF);
  g.warning = clamp_warning(g);
  return g;
}

std::string clamp_warning(const BufferGrant& g, const std::string& where) {
  if (g.requested == 0) return {};
  // Linux grants twice the request unless net.core.{w,r}mem_max caps it.
  std::string clamped;
  if (g.sndbuf < 2ull * g.requested) clamped += "send buffer to " + format_size(g.sndbuf / 2) + " (raise net.core.wmem_max to " + std::to_string(g.requested) + ")";
  if (g.rcvbuf < 2ull * g.requested) {
    if (!clamped.empty()) clamped += ", ";
    clamped += "receive buffer to " + format_size(g.rcvbuf / 2) + " (raise net.core.rmem_max to " + std::to_string(g.requested) + ")";
  }
  if (clamped.empty()) return {};
  return where + " clamped the requested window " + format_size(g.requested) + ": " + clamped;
}

std::string describe(const BufferGrant& grant) {
  std::string s = "snd " + format_size(grant.sndbuf) + " / rcv " + format_size(grant.rcvbuf);
  return grant.requested == 0 ? "auto (" + s + ")" : s;
}

bool read_tcp_info(int fd, TcpSnapshot& out) {
  tcp_info info{};
  socklen_t len = sizeof info;
  if (::getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &len) != 0) return false;
  out.cwnd_segments = info.tcpi_snd_cwnd;
  out.mss = info.tcpi_snd_mss;
  out.rtt_us = info.tcpi_rtt;
  out.rttvar_us = info.tcpi_rttvar;
  out.total_retrans = info.tcpi_total_retrans;
  out.snd_wscale = info.tcpi_snd_wscale;
  out.rcv_wscale = info.tcpi_rcv_wscale;
  out.delivery_rate = info.tcpi_delivery_rate;
  out.ssthresh = info.tcpi_snd_ssthresh;
  out.busy_us = info.tcpi_busy_time;
  out.rwnd_limited_us = info.tcpi_rwnd_limited;
  out.sndbuf_limited_us = info.tcpi_sndbuf_limited;
  int outq = 0, nsd = 0;
  if (::ioctl(fd, SIOCOUTQ, &outq) == 0) out.outq_bytes = static_cast<std::uint32_t>(outq);
  if (::ioctl(fd, SIOCOUTQNSD, &nsd) == 0) out.unsent_bytes = static_cast<std::uint32_t>(nsd);
  return true;
}

void abort_on_close(int fd) {
  linger abort{1, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_LINGER, &abort, sizeof abort);
}

void enable_keepalive(int fd, int idle_seconds) {
  int on = 1, idle = idle_seconds, interval = idle_seconds / 3 > 0 ? idle_seconds / 3 : 1, count = 3;
  ::setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof on);
  ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof idle);
  ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &interval, sizeof interval);
  ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &count, sizeof count);
}

}  // namespace pxfer
