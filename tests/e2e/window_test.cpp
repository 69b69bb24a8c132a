// -w pins SO_SNDBUF/SO_RCVBUF on every data stream at both ends: the summary must report what the
// kernels granted, and the pinned sockets must still negotiate TCP window scaling (a buffer
// pinned on a socket before its handshake can shrink the scale it offers to 0).
#include <gtest/gtest.h>
#include <stdio.h>
#include <unistd.h>

#include <cstdlib>
#include <map>
#include <regex>
#include <sstream>
#include <thread>

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

class PinnedWindow : public ::testing::TestWithParam<const char*> {};

TEST_P(PinnedWindow, SummaryReportsGrantedBuffers) {
  const std::string window = GetParam();
  const double requested = window == "1M" ? static_cast<double>(MiB) : std::stod(window);
  TempDir dir(big_file_base());
  std::string root = dir.subdir("root"), local = dir.subdir("local");
  ServerProcess server(root);
  std::string src = local + "/w.bin";
  make_file(src, 8 * MiB + 1, 21);

  RunResult r = run_pxfer("put", src, server.url("w.bin"), "-w", window, "-p", "2", "--block-size", "1M");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(files_equal(src, root + "/w.bin"));

  const std::string size = R"(([0-9.]+) (B|KiB|MiB|GiB))";
  const std::regex buffers("buffers local snd " + size + " / rcv " + size + ", remote snd " + size + " / rcv " + size);
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.out, m, buffers)) << "no pinned-buffer report in:\n" << r.out;
  // Linux grants twice the request (bookkeeping overhead) unless net.core.{w,r}mem_max caps it;
  // a capped grant is announced by a warning on stderr.
  const char* names[] = {"local snd", "local rcv", "remote snd", "remote rcv"};
  for (int i = 0; i < 4; ++i) {
    double granted = parse_size_text(m[1 + 2 * i].str(), m[2 + 2 * i].str());
    if (r.err.empty()) {
      EXPECT_GE(granted, requested) << names[i] << " in: " << m[0];
    }
    EXPECT_GT(granted, 0) << names[i];
  }
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

TEST(PinnedWindowScaling, ServerSocketsStillScaleWithWindow1M) {
  if (!on_path("ss")) GTEST_SKIP() << "ss (iproute2) not installed";
  TempDir dir(big_file_base());
  std::string root = dir.subdir("root"), local = dir.subdir("local");
  ServerProcess server(root);
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
