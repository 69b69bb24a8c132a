// pxferd's blocking pool and its per-identity gate (src/server/blocking_pool.hpp): work runs on a
// pool thread and the caller resumes on its own; a third SUM/LIST of one identity waits for one
// of its own to end while another identity goes straight in.
#include <gtest/gtest.h>

#include <algorithm>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <string>
#include <thread>
#include <vector>

#include "pxfer/common/error.hpp"
#include "policy/fair_share.hpp"
#include "server/blocking_pool.hpp"

namespace pxfer::server {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;

TEST(BlockingPool, RunsWorkOnAPoolThreadAndResumesTheCallerOnItsOwn) {
  asio::io_context ioc;
  BlockingPool pool(2);
  std::thread::id worker, resumed;
  std::string error;
  asio::co_spawn(
      ioc,
      [&]() -> net::awaitable<void> {
        std::function<void()> work = [&] { worker = std::this_thread::get_id(); };
        co_await pool.run(work);
        resumed = std::this_thread::get_id();
        std::function<void()> failing = [] { throw Error(Errc::not_found, "gone"); };
        try {
          co_await pool.run(failing);
        } catch (const Error& e) {
          error = e.what();
        }
      },
      asio::detached);
  ioc.run();
  EXPECT_NE(worker, std::this_thread::get_id());
  EXPECT_NE(worker, std::thread::id());
  EXPECT_EQ(resumed, std::this_thread::get_id());
  EXPECT_EQ(error, "gone");
}

net::awaitable<void> hold(IdentityGate& gate, std::string identity, std::chrono::milliseconds how_long,
                          std::vector<std::string>& log) {
  auto permit = co_await gate.enter(identity);
  log.push_back(identity + " in");
  asio::steady_timer timer(co_await asio::this_coro::executor, how_long);
  co_await timer.async_wait(asio::use_awaitable);
  log.push_back(identity + " out");
}

TEST(IdentityGate, AThirdRequestOfOneIdentityWaitsAnotherIdentityDoesNot) {
  asio::io_context ioc;
  IdentityGate gate(2);
  std::vector<std::string> log;
  asio::co_spawn(ioc, hold(gate, "a", 200ms, log), asio::detached);
  asio::co_spawn(ioc, hold(gate, "a", 300ms, log), asio::detached);
  asio::co_spawn(ioc, hold(gate, "a", 10ms, log), asio::detached);
  asio::co_spawn(ioc, hold(gate, "b", 10ms, log), asio::detached);
  ioc.run();
  ASSERT_EQ(log.size(), 8u);
  auto at = [&](const std::string& what, int nth = 1) {
    auto it = log.begin();
    for (int i = 0; i < nth; ++i) it = std::find(i ? it + 1 : it, log.end(), what);
    return it - log.begin();
  };
  EXPECT_EQ(at("a in", 3), at("a out") + 1) << "the third of a's requests must wait for the first to end";
  EXPECT_LT(at("b in"), at("a out")) << "b must not wait for a";
}

}  // namespace
}  // namespace pxfer::server

namespace pxfer::policy {
namespace {

// The order in which free workers start queued jobs: identities take turns, and an identity that
// runs a job already leaves the last kept worker to an identity with nothing running (issue 34:
// two identities' SUMs made a third one's LIST wait 33.8 s).
TEST(FairShare, IdentitiesTakeTurnsAndTheKeptWorkerGoesToANewcomer) {
  FairShare<std::string> pool(5, 1);  // 4 threads and 1 kept
  for (int i = 0; i < 3; ++i) {
    pool.push("a", "a-sum" + std::to_string(i));
    pool.push("b", "b-sum" + std::to_string(i));
  }
  std::vector<std::string> started;
  while (auto next = pool.start()) started.push_back(next->second);
  EXPECT_EQ(started, (std::vector<std::string>{"a-sum0", "b-sum0", "a-sum1", "b-sum1"}))
      << "a and b alternate and leave one worker free";
  pool.push("c", "c-list");
  auto list = pool.start();
  ASSERT_TRUE(list) << "c runs nothing: the kept worker is its";
  EXPECT_EQ(list->second, "c-list");
  EXPECT_FALSE(pool.start()) << "every worker busy";
  pool.finish("c");
  EXPECT_FALSE(pool.start()) << "the freed worker is the kept one again";
  pool.finish("b");
  auto next = pool.start();
  ASSERT_TRUE(next);
  EXPECT_EQ(next->second, "a-sum2") << "a's turn came before b's";
  EXPECT_EQ(pool.waiting(), 1u);
}

TEST(FairShare, OneIdentityAloneUsesAllButTheKeptWorkers) {
  FairShare<int> pool(3, 1);
  for (int i = 0; i < 5; ++i) pool.push("", i);
  int started = 0;
  while (pool.start()) ++started;
  EXPECT_EQ(started, 2);
  EXPECT_EQ(pool.waiting(), 3u);
  pool.finish("");
  pool.finish("");
  EXPECT_TRUE(pool.start());
  EXPECT_TRUE(pool.start());
  EXPECT_FALSE(pool.start());
}

}  // namespace
}  // namespace pxfer::policy
