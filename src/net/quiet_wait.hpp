#pragma once
// A timer wait that ends quietly when cancelled: no operation_aborted thrown through every
// coroutine frame above it, once per small file (docs/performance.md section 5). For the
// watchers that run beside a transfer (heartbeat, stall watch, STATS, rate lines, a read's
// deadline) and are cancelled by net::first_of when the work they watch ends.
#include "pxfer/io/layer.hpp"
#include <boost/asio/error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>

#include "connection.hpp"

namespace pxfer::net {

inline bool cancel_requested(const asio::cancellation_state& state) {
  return state.cancelled() != asio::cancellation_type::none;
}

// Waits for `timer`; true when this coroutine was cancelled, during the wait or before it.
// The caller runs with throw_if_cancelled(false). Why the check before the wait: a cancellation
// that arrives while the coroutine waits on nothing cancellable (its last wait's completion queued
// but not yet resumed, a frame being sent through the write gate) only marks the coroutine's
// cancellation state. The next wait would never hear of it, and a watcher loop that a transfer's
// end should stop would tick on forever: the network-cut lab test hung in 3 of ~9 runs that way.
inline awaitable<bool> wait_unless_cancelled(asio::steady_timer& timer) {
  auto state = co_await asio::this_coro::cancellation_state;
  if (cancel_requested(state)) co_return true;
  auto [ec] = co_await timer.async_wait(use_tuple);
  if (ec == asio::error::operation_aborted) co_return true;
  state = co_await asio::this_coro::cancellation_state;
  co_return cancel_requested(state);
}

}  // namespace pxfer::net
