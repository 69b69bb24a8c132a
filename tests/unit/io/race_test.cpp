// net::first_of (src/net/race.hpp) with a watcher branch that ends quietly when cancelled
// (net::wait_unless_cancelled: the control heartbeat, the stall watch, a read's deadline; no
// exception per file). The branch that finishes first still decides; a cancellation of the whole
// pair from outside still ends in operation_aborted; a cancellation that arrives between two
// waits of a watcher loop still ends the loop (it once did not: the network-cut lab test hung).
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
#include <functional>
#include <optional>

#include "net/quiet_wait.hpp"
#include "net/race.hpp"

namespace pxfer::net {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;

// Like Transfer::keep_control_alive: a timer that ends quietly when cancelled.
awaitable<void> quiet_watch(std::chrono::milliseconds period) {
  co_await asio::this_coro::throw_if_cancelled(false);
  asio::steady_timer timer(co_await asio::this_coro::executor, period);
  co_await wait_unless_cancelled(timer);
}

// Like a read: a timer that throws operation_aborted when cancelled, else yields a value.
awaitable<int> work(std::chrono::milliseconds took) {
  asio::steady_timer timer(co_await asio::this_coro::executor, took);
  co_await timer.async_wait(asio::use_awaitable);
  co_return 7;
}

// Work that does not stop at once when cancelled (a write finishing, a frame being read whole).
awaitable<int> work_finishing_anyway(std::chrono::milliseconds took) {
  co_await asio::this_coro::reset_cancellation_state(asio::disable_cancellation());
  asio::steady_timer timer(co_await asio::this_coro::executor, took);
  co_await timer.async_wait(asio::use_awaitable);
  co_return 7;
}

// Like Transfer::watch_progress: ticks until cancelled. After its first tick, `between_waits`
// runs while no wait is pending, as when a cancellation comes while the last wait's completion is
// queued or a heartbeat is being sent.
awaitable<void> ticking_watch(int& ticks, std::function<void()> between_waits) {
  co_await asio::this_coro::throw_if_cancelled(false);
  asio::steady_timer timer(co_await asio::this_coro::executor);
  for (;;) {
    timer.expires_after(1ms);
    const bool cancelled = co_await wait_unless_cancelled(timer);
    if (cancelled) co_return;
    if (++ticks == 1) between_waits();
  }
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

TEST(Race, CancelledFromOutsideEndsInOperationAbortedNotInATimeout) {
  asio::io_context ioc;
  asio::cancellation_signal cancel;
  std::exception_ptr error;
  std::optional<int> value;
  bool done = false;
  // The watcher, cancelled with the pair, ends first and quietly; the work ends later, normally.
  asio::co_spawn(ioc, first_of(work_finishing_anyway(200ms), quiet_watch(5s)),
                 asio::bind_cancellation_slot(cancel.slot(), [&](std::exception_ptr e, std::optional<int> v) {
                   error = e;
                   value = v;
                   done = true;
                 }));
  asio::steady_timer later(ioc, 20ms);
  later.async_wait([&](boost::system::error_code) { cancel.emit(asio::cancellation_type::terminal); });
  ioc.run_for(3s);
  ASSERT_TRUE(done) << "the cancelled pair never finished";
  ASSERT_TRUE(error) << "a cancelled pair must not look like the watcher finishing first";
  try {
    std::rethrow_exception(error);
  } catch (const boost::system::system_error& e) {
    EXPECT_EQ(e.code(), asio::error::operation_aborted);
  }
  EXPECT_EQ(value, std::nullopt);
}

// The lost cancellation behind the network-cut hang: cancelled while it waited on nothing, a
// watcher loop must still end at its next wait instead of ticking on forever.
TEST(Race, ACancellationBetweenTwoWaitsStillEndsTheWatcher) {
  asio::io_context ioc;
  asio::cancellation_signal cancel;
  int ticks = 0;
  bool done = false;
  asio::co_spawn(ioc, ticking_watch(ticks, [&] { cancel.emit(asio::cancellation_type::terminal); }),
                 asio::bind_cancellation_slot(cancel.slot(), [&](std::exception_ptr e) {
                   EXPECT_FALSE(e);
                   done = true;
                 }));
  ioc.run_for(300ms);
  EXPECT_TRUE(done) << "the watcher ticked on after its cancellation (" << ticks << " ticks)";
  EXPECT_EQ(ticks, 1);
}

}  // namespace
}  // namespace pxfer::net
