// Limits against abuse (issue 6 point 5, docs/security.md): connection limits at accept, idle
// and trickling peers, a thousand idle connections beside a real transfer, and ten thousand
// random or mutated frames on the port. Each against a real pxferd.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <random>
#include <stdexcept>
#include <thread>
#include <vector>

#include "wire/wire.hpp"
#include "support/e2e.hpp"
#include "support/sourced_connection.hpp"

namespace pxfer::e2e {
namespace {

using namespace std::chrono_literals;

std::size_t count_of(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto pos = text.find(what); pos != std::string::npos; pos = text.find(what, pos + 1)) ++n;
  return n;
}

// The test process needs a descriptor per idle connection.
void raise_open_file_limit(rlim_t wanted) {
  rlimit files{};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &files), 0);
  if (files.rlim_cur >= wanted) return;
  if (files.rlim_max != RLIM_INFINITY && files.rlim_max < wanted)
    GTEST_SKIP() << "RLIMIT_NOFILE hard limit " << files.rlim_max << " is below the " << wanted << " this test needs";
  files.rlim_cur = wanted;
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &files), 0);
}

// At a quota, a new connection closes the oldest one that has not logged in (issue 34): idle
// connections hold no client out. Over the per-address quota, that address's own oldest.
using Limits = DirsTest;

TEST_F(Limits, ConnectionsOverThePerAddressLimitCloseThatAddressesOldestIdleOnes) {
  ServerProcess server = serve({"--max-connections-per-address", "5"});
  std::vector<std::unique_ptr<SourcedConnection>> held;
  for (int i = 0; i < 5; ++i) held.push_back(std::make_unique<SourcedConnection>("127.0.0.2", server.port()));
  SourcedConnection other("127.0.0.3", server.port());
  std::vector<std::unique_ptr<SourcedConnection>> extra;
  for (int i = 0; i < 3; ++i) extra.push_back(std::make_unique<SourcedConnection>("127.0.0.2", server.port()));
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(held[static_cast<std::size_t>(i)]->closed_within(2000)) << "idle connection " << i << " was kept";
  EXPECT_FALSE(held[3]->closed_within(200)) << "a connection that did not have to go was closed";
  for (auto& c : extra) EXPECT_FALSE(c->closed_within(100)) << "a new connection was refused";
  EXPECT_FALSE(other.closed_within(100)) << "another address's connection was closed";
  // Another address is not affected: a put from 127.0.0.1 with 4 streams goes through.
  std::string src = local + "/a.bin";
  make_file(src, 3 * MiB + 1, 31);
  RunResult r = run_pxfer("put", src, server.url("a.bin"), "-p", "4");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(files_equal(src, root + "/a.bin"));
  EXPECT_EQ(count_of(server.log(), "connection refused"), 0u) << server.log();
}

TEST_F(Limits, ConnectionsOverTheTotalLimitCloseTheOldestIdleOne) {
  ServerProcess server = serve({"--max-connections", "4"});
  std::vector<std::unique_ptr<SourcedConnection>> held;
  for (const char* source : {"127.0.0.2", "127.0.0.3", "127.0.0.4", "127.0.0.5"})
    held.push_back(std::make_unique<SourcedConnection>(source, server.port()));
  SourcedConnection extra("127.0.0.6", server.port());
  EXPECT_TRUE(held[0]->closed_within(2000));
  EXPECT_FALSE(held[3]->closed_within(200));
  EXPECT_FALSE(extra.closed_within(200));
}

// The first-frame deadline (10 s) covers the whole frame: one byte every 500 ms (a 50-byte HELLO
// would take 25 s) does not keep a connection open.
TEST_F(Limits, APeerTricklingBytesIsDroppedAtTheHelloDeadline) {
  ServerProcess server = serve();
  SourcedConnection trickler("127.0.0.2", server.port());
  wire::Hello hello;
  hello.agent = std::string(30, 'a');
  auto frame = wire::encode(hello);
  const auto start = std::chrono::steady_clock::now();
  bool dropped = false;
  while (std::chrono::steady_clock::now() - start < 20s) {
    // A HELLO's bytes, then its header again and again: always a frame in progress.
    for (std::uint8_t b : frame) {
      if (!trickler.send_byte(static_cast<char>(b))) {
        dropped = true;
        break;
      }
      std::this_thread::sleep_for(500ms);
      if (std::chrono::steady_clock::now() - start > 20s) break;
    }
    if (dropped) break;
  }
  auto seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_TRUE(dropped) << "a trickling peer was still connected after 20 s";
  EXPECT_LT(seconds, 14.0);
  EXPECT_TRUE(server.running());
}

// Sockets pxferd holds open now (its /proc/PID/fd), counted from outside.
std::size_t server_sockets(const ServerProcess& server) { return open_files_of(server.pid(), "socket:").size(); }

TEST_F(Limits, AThousandIdleConnectionsDoNotStopA64MiBPut) {
  raise_open_file_limit(4096);
  if (HasFatalFailure() || IsSkipped()) return;
  // The defaults (4096 total, 1024 per address) hold 1,000 idle connections from one address.
  ServerProcess server = serve();
  std::string src = local + "/big.bin";
  make_file(src, 64 * MiB, 64);
  // The same put without the idle connections first, for comparison (printed, not asserted: the
  // machine is shared, so single timings vary too much for a ratio to be a reliable check).
  const auto base_start = std::chrono::steady_clock::now();
  RunResult base = run_pxfer("put", src, server.url("base.bin"), "-p", "4");
  auto base_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - base_start).count();
  ASSERT_EQ(base.exit_code, 0) << base.err;
  std::this_thread::sleep_for(200ms);
  const std::size_t base_sockets = server_sockets(server);
  std::vector<std::unique_ptr<SourcedConnection>> idle;
  for (int i = 0; i < 1000; ++i) idle.push_back(std::make_unique<SourcedConnection>("127.0.0.2", server.port()));
  const auto opened = std::chrono::steady_clock::now();
  ChildProcess put = start_pxfer({"put", src, server.url("big.bin"), "-p", "4", "--perf-interval", "0.05"});
  // While the put moves data, and well inside the 10 s first-frame deadline that may close idle
  // connections, pxferd holds all 1,000 of them: it did not drop them to cope.
  std::size_t moving_samples = 0, least_held = SIZE_MAX;
  while (!put.try_wait()) {
    put.pump(20ms);
    auto bytes = rate_line_bytes(put.out());
    if (bytes.empty() || bytes.back() == 0 || std::chrono::steady_clock::now() - opened > 9s) continue;
    std::size_t held = server_sockets(server);
    held = held > base_sockets ? held - base_sockets : 0;
    least_held = std::min(least_held, held);
    ++moving_samples;
  }
  auto seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - opened).count();
  ASSERT_EQ(put.wait(10s), 0) << put.err();
  EXPECT_TRUE(files_equal(src, root + "/big.bin"));
  std::printf("64 MiB put (process start to exit): %.2f s alone, %.2f s beside 1,000 idle connections\n",
              base_seconds, seconds);
  ASSERT_GT(moving_samples, 0u) << "the put moved no data within 9 s of the idle connections opening";
  EXPECT_GE(least_held, 1000u) << "pxferd held only " << least_held << " sockets beyond its " << base_sockets
                               << " while the put ran (" << moving_samples << " samples)";
  EXPECT_TRUE(server.running());
  RunResult g = run_pxfer("get", server.url("big.bin"), local + "/back.bin", "-p", "2");
  EXPECT_EQ(g.exit_code, 0) << g.err;
  EXPECT_TRUE(files_equal(src, local + "/back.bin"));
}

// Frames a fuzzer would send, on the clear port: random bytes, and valid frames of every type with
// bytes flipped, lengths changed or cut short. Each on its own connection, since the server drops
// a connection at its first bad frame. The server must keep serving.
std::vector<std::vector<std::uint8_t>> valid_frames() {
  std::vector<std::vector<std::uint8_t>> frames;
  wire::Hello hello;
  hello.agent = "fuzz";
  frames.push_back(wire::encode(hello));
  wire::Attach attach;
  attach.token.fill(7);
  frames.push_back(wire::encode(attach));
  wire::Open open;
  open.direction = wire::Direction::put;
  open.streams = 2;
  open.block_size = 1 << 20;
  open.path = "x.bin";
  frames.push_back(wire::encode(open));
  frames.push_back(wire::encode(wire::Auth{"token"}));
  frames.push_back(wire::encode(wire::Ping{1}));
  frames.push_back(wire::encode(wire::List{"."}));
  auto block = wire::encode_block_header(wire::BlockHeader{0, 4096, 0, 4096});
  frames.emplace_back(block.begin(), block.end());
  return frames;
}

TEST_F(Limits, TenThousandRandomAndMutatedFramesLeaveTheServerServing) {
  ServerProcess server = serve();
  const std::size_t base_sockets = server_sockets(server);
  std::mt19937_64 rng(20261123);
  auto frames = valid_frames();
  int connect_failures = 0;
  for (int i = 0; i < 10000; ++i) {
    std::vector<std::uint8_t> bytes;
    switch (rng() % 4) {
      case 0: {  // random bytes, random length
        bytes.resize(rng() % 64);
        for (auto& b : bytes) b = static_cast<std::uint8_t>(rng());
        break;
      }
      case 1: {  // a valid frame with a few bytes flipped
        bytes = frames[rng() % frames.size()];
        for (int k = 0, n = 1 + static_cast<int>(rng() % 4); k < n; ++k)
          bytes[rng() % bytes.size()] ^= static_cast<std::uint8_t>(1 + rng() % 255);
        break;
      }
      case 2: {  // a valid frame cut short
        bytes = frames[rng() % frames.size()];
        bytes.resize(rng() % bytes.size());
        break;
      }
      default: {  // a valid frame whose length or type field lies
        bytes = frames[rng() % frames.size()];
        std::size_t field = rng() % 2 == 0 ? rng() % 4 : 4 + rng() % 2;
        bytes[field] = static_cast<std::uint8_t>(rng());
        break;
      }
    }
    try {
      RawConnection c("127.0.0.1", server.port());
      c.send_all(std::string(bytes.begin(), bytes.end()));  // may fail: the server can drop it at once
    } catch (const std::exception&) {
      ++connect_failures;
    }
    if (i % 2000 == 1999) {
      ASSERT_TRUE(server.running()) << "pxferd died after " << i + 1 << " frames\n" << server.log();
    }
  }
  EXPECT_EQ(connect_failures, 0);
  ASSERT_TRUE(server.running()) << server.log();
  // Every one of those connections is gone at the server too (the test closed its end of each):
  // none leaked a descriptor, a session or a half-read frame. Within the 10 s first-frame
  // deadline plus a margin.
  auto deadline = std::chrono::steady_clock::now() + 15s;
  while (server_sockets(server) > base_sockets && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(100ms);
  EXPECT_LE(server_sockets(server), base_sockets) << "pxferd still holds sockets of the 10,000 closed connections";
  std::string src = local + "/after.bin";
  make_file(src, 5 * MiB + 7, 77);
  RunResult r = run_pxfer("put", src, server.url("after.bin"), "-p", "4");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(files_equal(src, root + "/after.bin"));
}

}  // namespace
}  // namespace pxfer::e2e
