// -w pins SO_SNDBUF/SO_RCVBUF on every data stream at both ends: the summary must report what the
// kernels granted, and the pinned sockets must still negotiate TCP window scaling (a buffer
// pinned on a socket before its handshake can shrink the scale it offers to 0).
#include <gtest/gtest.h>
#include <stdio.h>
#include <unistd.h>

#include <cstdlib>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include "fault_proxy.hpp"
#include "support/e2e.hpp"

namespace pxfer::e2e {
namespace {

// "2 MiB", "170.7 KiB", "87380 B" -> bytes.
double parse_size_text(const std::string& number, const std::string& unit) {
  double v = std::stod(number);
  if (unit == "KiB") return v * KiB;
  if (unit == "MiB") return v * MiB;
  if (unit == "GiB") return v * GiB;
  return v;
}

std::uint64_t sysctl_core(const std::string& name) {
  std::uint64_t v = 0;
  std::istringstream(read_text("/proc/sys/net/core/" + name)) >> v;
  return v;
}

// What Linux makes of setsockopt(SO_SNDBUF/SO_RCVBUF, request): the request capped by the sysctl
// maximum, doubled for bookkeeping (net/core/sock.c); floor values are far below these requests.
std::uint64_t kernel_grant(std::uint64_t requested, std::uint64_t sysctl_max) { return 2 * std::min(requested, sysctl_max); }

class PinnedWindow : public DirsTest, public ::testing::WithParamInterface<const char*> {
 protected:
  PinnedWindow() : DirsTest(big_file_base()) {}
};

// The grants are computed from the sysctls, read on the sockets from outside (ss, both ends'
// data sockets) and compared with the summary, whether the kernel clamped the request or not; a
// clamp must come with a warning, and only a clamp.
TEST_P(PinnedWindow, SummaryReportsGrantedBuffers) {
  if (!ss_available()) GTEST_SKIP() << "ss (iproute2) not installed";
  const std::string window = GetParam();
  const std::uint64_t requested = window == "1M" ? MiB : std::stoull(window);
  const std::uint64_t rmem_max = sysctl_core("rmem_max"), wmem_max = sysctl_core("wmem_max");
  ASSERT_GT(rmem_max, 0u);
  ASSERT_GT(wmem_max, 0u);
  const std::uint64_t want_rcv = kernel_grant(requested, rmem_max), want_snd = kernel_grant(requested, wmem_max);
  const bool clamped = requested > rmem_max || requested > wmem_max;
  ServerProcess server = serve();
  std::string src = local + "/w.bin";
  make_file(src, 8 * MiB + 1, 21);
  // Paced at 8 MiB/s per connection: about half a second, long enough to sample the sockets.
  pxfer::testing::FaultProxy paced(server.port());
  paced.set_rate(8 * MiB);
  pin_server("127.0.0.1:" + std::to_string(paced.port()), server.fingerprint());

  ChildProcess put = start_pxfer({"put", src, "pxfer://127.0.0.1:" + std::to_string(paced.port()) + "/w.bin", "-w", window,
                                  "-p", "2", "--block-size", "1M"});
  std::set<std::string> client_pinned, server_pinned;  // sockets seen holding exactly the grant
  std::set<std::string> client_all, server_all;
  while (!put.try_wait()) {
    for (const auto& s : established_sockets(paced.port())) {
      if (s.peer_port != paced.port()) continue;
      client_all.insert(s.local);
      if (s.rcvbuf == static_cast<long>(want_rcv) && s.sndbuf == static_cast<long>(want_snd)) client_pinned.insert(s.local);
    }
    for (const auto& s : established_sockets(server.port())) {
      if (s.local_port != server.port()) continue;
      server_all.insert(s.peer);
      if (s.rcvbuf == static_cast<long>(want_rcv) && s.sndbuf == static_cast<long>(want_snd)) server_pinned.insert(s.peer);
    }
    put.pump(10ms);
  }
  ASSERT_EQ(put.wait(30s), 0) << put.err();
  EXPECT_TRUE(files_equal(src, root + "/w.bin"));
  // Both data streams at both ends hold rcv = want_rcv and snd = want_snd.
  EXPECT_GE(client_pinned.size(), 2u) << "of " << client_all.size() << " client sockets, expected rb " << want_rcv << " tb " << want_snd;
  EXPECT_GE(server_pinned.size(), 2u) << "of " << server_all.size() << " server sockets, expected rb " << want_rcv << " tb " << want_snd;

  const std::string size = R"(([0-9.]+) (B|KiB|MiB|GiB))";
  const std::regex buffers("buffers local snd " + size + " / rcv " + size + ", remote snd " + size + " / rcv " + size);
  std::smatch m;
  const std::string out = put.out();
  ASSERT_TRUE(std::regex_search(out, m, buffers)) << "no pinned-buffer report in:\n" << out;
  const char* names[] = {"local snd", "local rcv", "remote snd", "remote rcv"};
  const double want[] = {double(want_snd), double(want_rcv), double(want_snd), double(want_rcv)};
  for (int i = 0; i < 4; ++i) {
    double granted = parse_size_text(m[1 + 2 * i].str(), m[2 + 2 * i].str());
    // The summary rounds to one decimal of its unit.
    EXPECT_NEAR(granted, want[i], want[i] * 0.001 + 0.05 * (granted >= MiB ? MiB : granted >= KiB ? KiB : 1))
        << names[i] << " in: " << m[0];
  }
  EXPECT_EQ(put.err().find("clamped") != std::string::npos, clamped)
      << "request " << requested << ", rmem_max " << rmem_max << ", wmem_max " << wmem_max << ": " << put.err();
}

INSTANTIATE_TEST_SUITE_P(Windows, PinnedWindow, ::testing::Values("1M", "87380"),
                         [](const ::testing::TestParamInfo<const char*>& param_info) {
                           return std::string("w_") + param_info.param;
                         });

bool on_path(const std::string& program) {
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "/usr/sbin:/usr/bin:/sbin:/bin");
  std::string d;
  while (std::getline(dirs, d, ':'))
    if (!d.empty() && ::access((d + "/" + program).c_str(), X_OK) == 0) return true;
  return false;
}

std::string run_command(const std::string& command) {
  std::string out;
  FILE* f = ::popen(command.c_str(), "r");
  if (!f) return out;
  char buf[4096];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) out.append(buf, n);
  ::pclose(f);
  return out;
}

struct SocketSample {
  std::string local, peer;
  int snd_wscale = -1, rcv_wscale = -1;
};

// Parses `ss -tinH state established ...`: an address line, then an indented line of TCP info.
std::vector<SocketSample> parse_ss(const std::string& text) {
  static const std::regex wscale(R"(wscale:(\d+),(\d+))");
  std::vector<SocketSample> sockets;
  for (const auto& line : split_lines(text)) {
    if (line.empty()) continue;
    if (line[0] != ' ' && line[0] != '\t') {
      std::istringstream in(line);
      std::vector<std::string> fields;
      for (std::string f; in >> f;) fields.push_back(f);
      if (fields.size() < 4) continue;
      // Recv-Q Send-Q Local Peer (no State column with a state filter)
      sockets.push_back({fields[fields.size() - 2], fields[fields.size() - 1]});
    } else if (!sockets.empty()) {
      std::smatch m;
      if (std::regex_search(line, m, wscale)) {
        sockets.back().snd_wscale = std::stoi(m[1]);
        sockets.back().rcv_wscale = std::stoi(m[2]);
      }
    }
  }
  return sockets;
}

class PinnedWindowScaling : public DirsTest {
 protected:
  PinnedWindowScaling() : DirsTest(big_file_base()) {}
};

TEST_F(PinnedWindowScaling, ServerSocketsStillScaleWithWindow1M) {
  if (!on_path("ss")) GTEST_SKIP() << "ss (iproute2) not installed";
  ServerProcess server = serve();
  std::string src = local + "/scale.bin";
  make_file(src, 512 * MiB, 33);
  constexpr int streams = 4;

  const std::string port = std::to_string(server.port());
  const std::string command =
      "ss -tinH state established '( sport = :" + port + " or dport = :" + port + " )' 2>/dev/null";
  const std::string server_side = ":" + port;

  ChildProcess client =
      start_pxfer({"put", src, server.url("scale.bin"), "-w", "1M", "-p", std::to_string(streams), "--block-size", "1M"});
  std::map<std::string, SocketSample> server_sockets;  // by local address:port
  std::size_t samples = 0, most_at_once = 0;
  while (!client.try_wait()) {
    auto sockets = parse_ss(run_command(command));
    std::size_t now = 0;
    for (const auto& s : sockets) {
      if (!s.local.ends_with(server_side)) continue;  // the client's end of the connection
      ++now;
      server_sockets[s.peer] = s;
    }
    most_at_once = std::max(most_at_once, now);
    ++samples;
    client.pump(20ms);
  }
  int status = client.wait(10s);
  ASSERT_EQ(status, 0) << client.err();
  EXPECT_TRUE(files_equal(src, root + "/scale.bin"));

  ASSERT_FALSE(server_sockets.empty()) << "ss never saw a connection to the server in " << samples
                                       << " samples; the transfer was too quick to sample";
  // The control connection and at least one data connection seen together (usually all of them).
  EXPECT_GE(most_at_once, 2u) << samples << " samples";
  for (const auto& [peer, s] : server_sockets) {
    SCOPED_TRACE("server socket " + s.local + " <- " + peer);
    EXPECT_GT(s.rcv_wscale, 0) << "the server's accepted socket offered no window scaling";
    EXPECT_GT(s.snd_wscale, 0) << "the client's pinned socket offered no window scaling";
  }
}

}  // namespace
}  // namespace pxfer::e2e
