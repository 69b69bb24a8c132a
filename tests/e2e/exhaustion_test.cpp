// What a stranger who never logs in can take from pxferd (issue 34, docs/security.md): memory for
// frames it will never be allowed to send, and the connection quotas a client that logs in needs.
// Raw sockets from several loopback source addresses against a real pxferd.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "support/e2e.hpp"
#include "support/sourced_connection.hpp"

namespace pxfer::e2e {
namespace {

using namespace std::chrono_literals;

// The test process needs a descriptor per connection it holds.
void raise_open_file_limit(rlim_t wanted) {
  rlimit files{};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &files), 0);
  if (files.rlim_cur >= wanted) return;
  if (files.rlim_max != RLIM_INFINITY && files.rlim_max < wanted)
    GTEST_SKIP() << "RLIMIT_NOFILE hard limit " << files.rlim_max << " is below the " << wanted << " this test needs";
  files.rlim_cur = wanted;
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &files), 0);
}

// Resident memory of a process in MiB (/proc/PID/status VmRSS).
double resident_mib(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string key;
  while (status >> key) {
    if (key == "VmRSS:") {
      double kib = 0;
      status >> kib;
      return kib / 1024;
    }
  }
  return -1;
}

// 127.0.0.2 ... : `n` source addresses, none of them pxfer's own 127.0.0.1.
std::string source_address(int i, int n) { return "127.0.0." + std::to_string(2 + i % n); }

// A frame header as the wire has it: u32 length, u16 type, u16 flags, big-endian.
std::string frame_header(std::uint32_t length, std::uint16_t type) {
  std::string h(8, '\0');
  for (int i = 0; i < 4; ++i) h[static_cast<std::size_t>(i)] = static_cast<char>(length >> (24 - 8 * i));
  h[4] = static_cast<char>(type >> 8);
  h[5] = static_cast<char>(type);
  return h;
}

// No retries: a refused connection fails the command, not only delays it until the idle
// connections' first-frame deadline (10 s) frees their places.
void expect_put_and_get(const ServerProcess& server, const std::string& local, const std::string& root) {
  std::string src = local + "/legit.bin";
  make_file(src, 8 * MiB + 5, 34);
  RunResult put = run_pxfer("put", src, server.url("legit.bin"), "-p", "4", "--retries", "0");
  EXPECT_EQ(put.exit_code, 0) << put.err;
  EXPECT_TRUE(files_equal(src, root + "/legit.bin"));
  RunResult get = run_pxfer("get", server.url("legit.bin"), local + "/back.bin", "-p", "2", "--retries", "0");
  EXPECT_EQ(get.exit_code, 0) << get.err;
  EXPECT_TRUE(files_equal(src, local + "/back.bin"));
}

// Each connection's first frame is a PUT_SMALL header claiming its largest payload (a small
// file's 1 MiB and more), followed by 768 KiB of it. Before login only HELLO, AUTH and ATTACH
// of a few KiB are read (limits::max_login_frame): such a connection is closed at its header.
// The old code read every one of them into a buffer of its own: about 770 MiB for 1,000.
using Exhaustion = DirsTest;

TEST_F(Exhaustion, AThousandConnectionsThatNeverLogInKeepPxferdUnder100MiB) {
  raise_open_file_limit(4096);
  if (HasFatalFailure() || IsSkipped()) return;
  ServerProcess server = serve();
  const double before = resident_mib(server.pid());
  constexpr std::uint16_t put_small = 46;
  const std::string frame = frame_header((64u << 10) + (1u << 20), put_small) + std::string(768u << 10, 'x');
  std::vector<std::unique_ptr<SourcedConnection>> strangers;
  double most = before;
  for (int i = 0; i < 1000; ++i) {
    strangers.push_back(std::make_unique<SourcedConnection>(source_address(i, 4), server.port()));
    strangers.back()->send_some(frame);
    if (i % 100 == 99) most = std::max(most, resident_mib(server.pid()));
  }
  std::this_thread::sleep_for(500ms);
  most = std::max(most, resident_mib(server.pid()));
  std::printf("pxferd resident: %.1f MiB before, at most %.1f MiB with 1,000 connections that never log in\n", before, most);
  EXPECT_LT(most, 100.0) << "pxferd grew from " << before << " MiB for strangers' frames";
  EXPECT_TRUE(server.running());
  expect_put_and_get(server, local, root);
}

// 4,100 connections that connect and say nothing, from five addresses (820 each, within the
// 1,024 per address): more than --max-connections (4,096). The old code refused every
// connection of a client that then came to log in; now the oldest of those that have not logged
// in are closed to make room, and pxferd never keeps more than limits::max_connections_logging_in.
TEST_F(Exhaustion, AClientLogsInAndTransfersBeside4100IdleConnections) {
  raise_open_file_limit(8192);
  if (HasFatalFailure() || IsSkipped()) return;
  ServerProcess server = serve();
  std::vector<std::unique_ptr<SourcedConnection>> idle;
  for (int i = 0; i < 4100; ++i) idle.push_back(std::make_unique<SourcedConnection>(source_address(i, 5), server.port()));
  std::this_thread::sleep_for(300ms);
  // Well inside the 10 s first-frame deadline that closes idle connections on its own.
  expect_put_and_get(server, local, root);
  EXPECT_TRUE(idle.front()->closed_within(1000)) << "the oldest idle connection was kept";
  EXPECT_FALSE(idle.back()->closed_within(100)) << "the newest idle connection was closed";
  EXPECT_TRUE(server.running());
}

}  // namespace
}  // namespace pxfer::e2e
