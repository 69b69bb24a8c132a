// Socket buffer sizes on a real (unconnected) TCP socket: what the kernel grants, the warning
// when it clamps a request, and how grants are described. No traffic, no peers.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <optional>
#include <string>

#include "pxfer/core/limits.hpp"
#include "pxfer/io/socket_tuning.hpp"

namespace pxfer {
namespace {

constexpr std::uint32_t MiB = 1u << 20;

std::optional<std::uint64_t> sysctl_value(const std::string& name) {
  std::ifstream in("/proc/sys/net/core/" + name);
  std::uint64_t v = 0;
  if (!(in >> v)) return std::nullopt;
  return v;
}

// A fresh TCP socket, closed at the end of the test.
class TcpSocket {
 public:
  TcpSocket() : fd_(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) {}
  ~TcpSocket() {
    if (fd_ >= 0) ::close(fd_);
  }
  TcpSocket(const TcpSocket&) = delete;
  int fd() const { return fd_; }

 private:
  int fd_;
};

int raw_option(int fd, int name) {
  int v = 0;
  socklen_t len = sizeof v;
  if (::getsockopt(fd, SOL_SOCKET, name, &v, &len) != 0) return -1;
  return v;
}

// 1 MiB, or the largest request the sysctls allow when they are lower (stock Debian: 208 KiB):
// granted in full both ways, as getsockopt reads it back here, and no warning.
TEST(SocketTuning, ARequestWithinTheSysctlLimitsIsGrantedBothWays) {
  auto rmem = sysctl_value("rmem_max"), wmem = sysctl_value("wmem_max");
  ASSERT_TRUE(rmem && wmem) << "cannot read net.core.rmem_max / wmem_max";
  const std::uint32_t request = static_cast<std::uint32_t>(std::min<std::uint64_t>({MiB, *rmem, *wmem}));
  TcpSocket s;
  ASSERT_GE(s.fd(), 0);
  BufferGrant g = apply_window(s.fd(), request);
  EXPECT_EQ(g.requested, request);
  // Linux doubles what it grants (bookkeeping); a request within the limits is never cut.
  EXPECT_EQ(raw_option(s.fd(), SO_SNDBUF), 2 * static_cast<int>(request));
  EXPECT_EQ(raw_option(s.fd(), SO_RCVBUF), 2 * static_cast<int>(request));
  EXPECT_EQ(g.sndbuf, static_cast<std::uint64_t>(raw_option(s.fd(), SO_SNDBUF)));
  EXPECT_EQ(g.rcvbuf, static_cast<std::uint64_t>(raw_option(s.fd(), SO_RCVBUF)));
  EXPECT_EQ(g.warning, "") << "granted in full, nothing to warn about";
  // Reading back gives the same figures.
  BufferGrant again = read_buffers(s.fd(), request);
  EXPECT_EQ(again.sndbuf, g.sndbuf);
  EXPECT_EQ(again.rcvbuf, g.rcvbuf);
}

TEST(SocketTuning, RequestAboveTheSysctlLimitsWarnsNamingThem) {
  constexpr std::uint32_t request = 512 * MiB;
  auto rmem = sysctl_value("rmem_max"), wmem = sysctl_value("wmem_max");
  if (!rmem || !wmem) GTEST_SKIP() << "cannot read net.core.rmem_max / wmem_max";
  if (*rmem >= request || *wmem >= request)
    GTEST_SKIP() << "net.core.rmem_max/wmem_max allow 512 MiB here; nothing gets clamped";
  TcpSocket s;
  ASSERT_GE(s.fd(), 0);
  BufferGrant g = apply_window(s.fd(), request);
  EXPECT_EQ(g.requested, request);
  EXPECT_LT(g.sndbuf, 2ull * request);
  EXPECT_LT(g.rcvbuf, 2ull * request);
  ASSERT_FALSE(g.warning.empty());
  EXPECT_NE(g.warning.find("net.core.rmem_max"), std::string::npos) << g.warning;
  EXPECT_NE(g.warning.find("net.core.wmem_max"), std::string::npos) << g.warning;
  EXPECT_NE(g.warning.find("512 MiB"), std::string::npos) << g.warning;
  EXPECT_EQ(g.warning.rfind("the kernel clamped", 0), 0u) << g.warning;
}

TEST(SocketTuning, ZeroLeavesAutotuning) {
  TcpSocket s;
  ASSERT_GE(s.fd(), 0);
  BufferGrant g = apply_window(s.fd(), 0);
  EXPECT_EQ(g.requested, 0u);
  EXPECT_GT(g.sndbuf, 0u);  // the kernel's defaults, whatever they are
  EXPECT_GT(g.rcvbuf, 0u);
  EXPECT_EQ(g.warning, "");
  EXPECT_EQ(describe(g).rfind("auto (snd ", 0), 0u) << describe(g);
}

// A data socket holds at most limits::data_notsent_lowat not yet sent, so a slow stream does not
// keep megabytes of the file's last blocks in its queue while the others idle.
TEST(SocketTuning, ADataSocketQueuesLittleUnsent) {
  TcpSocket s;
  ASSERT_GE(s.fd(), 0);
  int lowat = 0;
  socklen_t len = sizeof lowat;
  ASSERT_EQ(::getsockopt(s.fd(), IPPROTO_TCP, TCP_NOTSENT_LOWAT, &lowat, &len), 0);
  EXPECT_NE(static_cast<std::uint32_t>(lowat), limits::data_notsent_lowat);  // the kernel's default: unlimited
  tune_socket(s.fd(), SocketTuning{});
  ASSERT_EQ(::getsockopt(s.fd(), IPPROTO_TCP, TCP_NOTSENT_LOWAT, &lowat, &len), 0);
  EXPECT_EQ(static_cast<std::uint32_t>(lowat), limits::data_notsent_lowat);
}

TEST(ClampWarning, OnlyForTheDirectionThatWasClamped) {
  BufferGrant full{MiB, 2 * MiB, 2 * MiB, ""};
  EXPECT_EQ(clamp_warning(full), "");
  BufferGrant auto_grant{0, 4096, 4096, ""};
  EXPECT_EQ(clamp_warning(auto_grant), "") << "autotuning requests nothing, so nothing was clamped";

  BufferGrant rcv{8 * MiB, 16 * MiB, 8 * MiB, ""};
  std::string w = clamp_warning(rcv, "the server's kernel");
  EXPECT_EQ(w, "the server's kernel clamped the requested window 8 MiB: receive buffer to 4 MiB "
               "(raise net.core.rmem_max to 8388608)");

  BufferGrant snd{8 * MiB, 4 * MiB, 16 * MiB, ""};
  w = clamp_warning(snd);
  EXPECT_EQ(w, "the kernel clamped the requested window 8 MiB: send buffer to 2 MiB "
               "(raise net.core.wmem_max to 8388608)");

  BufferGrant both{8 * MiB, 4 * MiB, 4 * MiB, ""};
  w = clamp_warning(both);
  EXPECT_NE(w.find("send buffer to 2 MiB"), std::string::npos) << w;
  EXPECT_NE(w.find(", receive buffer to 2 MiB"), std::string::npos) << w;
}

TEST(Describe, AutoOrPinned) {
  EXPECT_EQ(describe(BufferGrant{0, 2626560, 131072, ""}), "auto (snd 2.5 MiB / rcv 128 KiB)");
  EXPECT_EQ(describe(BufferGrant{MiB, 2 * MiB, 2 * MiB, ""}), "snd 2 MiB / rcv 2 MiB");
}

}  // namespace
}  // namespace pxfer
