// Data connections made while OPEN crosses the path (client/early_streams.hpp, issue 39): a stream
// takes its slot's connection once it is made, the slots no stream takes go to the session's pool
// as they complete, and a slot whose connect failed is left empty (its stream connects itself and
// meets the error). Against a real pxferd: a queued OPEN finds its streams' connections made
// already and uses exactly those; one queued past the server's first-frame deadline (10 s), which
// closed them, connects new ones and succeeds.
#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/use_future.hpp>
#include <functional>
#include <thread>

#include "client/early_streams.hpp"
#include "fault_proxy.hpp"
#include "support/e2e.hpp"

namespace pxfer::e2e {
namespace {
namespace asio = boost::asio;
using asio::ip::tcp;
using namespace std::chrono_literals;

ControlLink link_to(asio::io_context& ioc, std::uint16_t port) {
  ControlLink link;
  tcp::resolver resolver(ioc);
  link.data_endpoints = resolver.resolve("127.0.0.1", std::to_string(port));
  link.authority = "127.0.0.1:" + std::to_string(port);
  link.host = "127.0.0.1";
  return link;
}

// Runs `ioc` on this thread until `done` or 10 s.
bool run_until(asio::io_context& ioc, const std::function<bool()>& done) {
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    ioc.run_for(10ms);
  }
  return true;
}

TEST(EarlyStreams, AStreamTakesItsSlotAndTheOthersGoToThePool) {
  asio::io_context ioc;
  tcp::acceptor acceptor(ioc, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
  std::vector<tcp::socket> accepted;
  std::function<void()> accept_next = [&] {
    acceptor.async_accept([&](boost::system::error_code ec, tcp::socket s) {
      if (ec) return;
      accepted.push_back(std::move(s));
      accept_next();
    });
  };
  accept_next();
  ControlLink link = link_to(ioc, acceptor.local_endpoint().port());
  const StreamPool::Kind kind{false, SocketTuning{}};
  auto early = EarlyStreams::start(ioc, link, ClientOptions{}, kind, 3);
  ASSERT_EQ(early->count(), 3);
  auto taken = asio::co_spawn(early->executor(0), early->take(0), asio::use_future);
  early->release(1);
  ASSERT_TRUE(run_until(ioc, [&] {
    return accepted.size() == 3 && taken.wait_for(0s) == std::future_status::ready && link.idle_streams->size() == 2;
  })) << accepted.size() << " accepted, " << link.idle_streams->size() << " in the pool";
  auto conn = taken.get();
  ASSERT_NE(conn, nullptr);
  EXPECT_TRUE(conn->socket().is_open());
  EXPECT_EQ(conn->socket().remote_endpoint().port(), acceptor.local_endpoint().port());
  // The pooled ones are of the kind they were made as, and connected.
  auto pooled = link.idle_streams->take(kind);
  ASSERT_NE(pooled, nullptr);
  EXPECT_NE(pooled, conn);
  EXPECT_TRUE(pooled->socket().is_open());
  early->release();  // as the job ends: the taken slot is left alone
  ioc.run_for(50ms);
  EXPECT_EQ(link.idle_streams->size(), 1u);
}

TEST(EarlyStreams, ASlotWhoseConnectFailedIsEmpty) {
  asio::io_context ioc;
  std::uint16_t closed_port = 0;
  {
    tcp::acceptor probe(ioc, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
    closed_port = probe.local_endpoint().port();
  }
  ControlLink link = link_to(ioc, closed_port);
  auto early = EarlyStreams::start(ioc, link, ClientOptions{}, StreamPool::Kind{false, SocketTuning{}}, 1);
  auto taken = asio::co_spawn(early->executor(0), early->take(0), asio::use_future);
  ASSERT_TRUE(run_until(ioc, [&] { return taken.wait_for(0s) == std::future_status::ready; }));
  EXPECT_EQ(taken.get(), nullptr);
  EXPECT_EQ(link.idle_streams->size(), 0u);
}

// The first get holds --max-active 1's only slot through a proxy paced at 8 MiB/s; the second,
// -p 4 through a counting proxy, waits in the server's queue for OPEN_OK.
struct QueuedGet {
  explicit QueuedGet(TestDirs& d, std::uint64_t size)
      : dirs(d), server(d.root, "127.0.0.1:0", {"--max-active", "1", "-v"}), slow(server.port()), counted(server.port()) {
    make_file(d.root + "/big.dat", size, 31);
    slow.set_rate(8u << 20);
    pin_server("127.0.0.1:" + std::to_string(slow.port()), server.fingerprint());
    pin_server("127.0.0.1:" + std::to_string(counted.port()), server.fingerprint());
  }
  std::string via(const pxfer::testing::FaultProxy& p) { return "pxfer://127.0.0.1:" + std::to_string(p.port()) + "/big.dat"; }
  bool wait_for_log(const std::string& needle) {
    for (auto deadline = std::chrono::steady_clock::now() + 20s; count_lines_containing(server.log(), needle) == 0;) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      std::this_thread::sleep_for(10ms);
    }
    return true;
  }
  TestDirs& dirs;
  ServerProcess server;
  pxfer::testing::FaultProxy slow, counted;
};

using EarlyStreamsServed = DirsTest;

TEST_F(EarlyStreamsServed, AQueuedGetHasItsStreamsConnectionsBeforeOpenIsAnsweredAndUsesThem) {
  QueuedGet q(*this, 24u << 20);  // 3 s for the first get
  auto first = start_pxfer({"get", "-p", "1", q.via(q.slow), dir / "one.dat"});
  ASSERT_TRUE(q.wait_for_log("admitted")) << q.server.log();
  auto second = start_pxfer({"get", "-p", "4", q.via(q.counted), dir / "two.dat"});
  ASSERT_TRUE(q.wait_for_log("queued position=1")) << q.server.log();
  // Still queued (the first holds the slot): the control connection and four data connections.
  for (auto deadline = std::chrono::steady_clock::now() + 5s; q.counted.accepted() < 5;) {
    if (std::chrono::steady_clock::now() > deadline) break;
    std::this_thread::sleep_for(10ms);
  }
  EXPECT_EQ(q.counted.accepted(), 5u) << "the streams' connections were not made while OPEN waited";
  EXPECT_FALSE(first.try_wait().has_value()) << "the first get ended before the check: the second was not queued";
  bool timed_out = false;
  EXPECT_EQ(first.wait(60s, &timed_out), 0) << first.err();
  EXPECT_EQ(second.wait(60s, &timed_out), 0) << second.err();
  EXPECT_EQ(q.counted.accepted(), 5u) << "no connection beyond the four made early";
  EXPECT_TRUE(files_equal(root + "/big.dat", dir / "one.dat"));
  EXPECT_TRUE(files_equal(root + "/big.dat", dir / "two.dat"));
}

// pxferd closes a connection whose first frame has not come within 10 s: a get queued longer finds
// its early connections closed, makes new ones at once, and succeeds without a retry.
TEST_F(EarlyStreamsServed, AGetQueuedPastTheServersFirstFrameDeadlineConnectsAgain) {
  QueuedGet q(*this, 104u << 20);  // 13 s for the first get
  auto first = start_pxfer({"get", "-p", "1", q.via(q.slow), dir / "one.dat"});
  ASSERT_TRUE(q.wait_for_log("admitted")) << q.server.log();
  auto second = start_pxfer({"get", "-p", "2", q.via(q.counted), dir / "two.dat"});
  bool timed_out = false;
  EXPECT_EQ(first.wait(90s, &timed_out), 0) << first.err();
  EXPECT_EQ(second.wait(60s, &timed_out), 0) << second.err();
  EXPECT_EQ(second.err().find("retry"), std::string::npos) << second.err();
  EXPECT_EQ(q.counted.accepted(), 5u) << "1 control + 2 early (closed by the server) + 2 new";
  EXPECT_TRUE(files_equal(root + "/big.dat", dir / "two.dat"));
}

}  // namespace
}  // namespace pxfer::e2e
