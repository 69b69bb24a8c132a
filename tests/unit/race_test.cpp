// net::first_of (src/net/race.hpp) with a watcher branch that ends quietly when cancelled: the
// branch that finishes first decides. (The watchers in src/ throw when cancelled again: making
// them quiet, for fewer exceptions per small file, made the network-cut lab test hang; see
// docs/performance.md section 5.)
#include <gtest/gtest.h>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/system/system_error.hpp>
#include <exception>
#include <optional>

#include "net/race.hpp"

namespace pxfer::net {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;

// Like Transfer::keep_control_alive: a timer that ends quietly when cancelled.
awaitable<void> quiet_watch(std::chrono::milliseconds period) {
  co_await asio::this_coro::throw_if_cancelled(false);
  asio::steady_timer timer(co_await asio::this_coro::executor, period);
  auto [cancelled] = co_await timer.async_wait(use_tuple);
  (void)cancelled;
}

// Like a read: a timer that throws operation_aborted when cancelled, else yields a value.
awaitable<int> work(std::chrono::milliseconds took) {
  asio::steady_timer timer(co_await asio::this_coro::executor, took);
  co_await timer.async_wait(asio::use_awaitable);
  co_return 7;
}

TEST(Race, TheBranchThatFinishesFirstDecides) {
  asio::io_context ioc;
  std::optional<int> quick, slow;
  bool quick_done = false, slow_done = false;
  asio::co_spawn(ioc, first_of(work(5ms), quiet_watch(5s)), [&](std::exception_ptr e, std::optional<int> v) {
    EXPECT_FALSE(e);
    quick = v;
    quick_done = true;
  });
  asio::co_spawn(ioc, first_of(work(5s), quiet_watch(5ms)), [&](std::exception_ptr e, std::optional<int> v) {
    EXPECT_FALSE(e);
    slow = v;
    slow_done = true;
  });
  ioc.run_for(3s);
  ASSERT_TRUE(quick_done && slow_done);
  EXPECT_EQ(quick, std::optional<int>(7));
  EXPECT_EQ(slow, std::nullopt);  // the watcher's period passed first: a timeout
}

}  // namespace
}  // namespace pxfer::net
