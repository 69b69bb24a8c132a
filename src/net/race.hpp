#pragma once
// Running two coroutines side by side. Asio's awaitable || waits for the first *successful*
// completion (a failing branch leaves us waiting on the other: a progress reporter that never
// ends, a timer) and its && throws multiple_exceptions when the branch it cancels fails too,
// hiding the cause. These end on the first completion, or the first failure, and rethrow the
// failure that came first.
#include "pxfer/io/layer.hpp"
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/error.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/system/system_error.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/asio/experimental/parallel_group.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <exception>
#include <optional>

#include "connection.hpp"

namespace pxfer::net {
namespace detail {

template <class T>
struct GroupOutcome {
  bool main_first = true;
  std::exception_ptr first_error;   // of whichever finished first
  std::exception_ptr second_error;  // of the other (often just its cancellation)
  T value{};
};

template <class T, class Condition>
awaitable<GroupOutcome<T>> run_pair(awaitable<T> main, awaitable<void> other, Condition condition) {
  namespace ex = asio::experimental;
  auto executor = co_await asio::this_coro::executor;
  auto [order, main_error, value, other_error] =
      co_await ex::make_parallel_group(asio::co_spawn(executor, std::move(main), asio::deferred),
                                       asio::co_spawn(executor, std::move(other), asio::deferred))
          .async_wait(condition, asio::use_awaitable);
  bool main_first = order[0] == 0;
  // A timer branch that was cancelled ends quietly (no exception per transfer: see sleep_for and
  // Transfer::keep_control_alive), so a cancellation of this whole pair from outside could look
  // like that branch finishing first. It is told apart here: cancelled from outside, the pair
  // always ends in operation_aborted, as it did when every cancelled branch threw.
  auto state = co_await asio::this_coro::cancellation_state;
  if (state.cancelled() != asio::cancellation_type::none)
    throw boost::system::system_error(asio::error::operation_aborted, "cancelled");
  co_return GroupOutcome<T>{main_first, main_first ? main_error : other_error, main_first ? other_error : main_error,
                            std::move(value)};
}

inline awaitable<bool> finished(awaitable<void> work) {
  co_await std::move(work);
  co_return true;
}

}  // namespace detail

// `main`'s value when it finishes first; nullopt when `other` finished first. The loser is
// cancelled; a failure of the first to finish is rethrown.
template <class T>
awaitable<std::optional<T>> first_of(awaitable<T> main, awaitable<void> other) {
  auto r = co_await detail::run_pair(std::move(main), std::move(other), asio::experimental::wait_for_one());
  if (r.first_error) std::rethrow_exception(r.first_error);
  if (!r.main_first) co_return std::nullopt;
  co_return std::optional<T>(std::move(r.value));
}

// True when `main` finished first.
inline awaitable<bool> first_of(awaitable<void> main, awaitable<void> other) {
  auto r = co_await first_of(detail::finished(std::move(main)), std::move(other));
  co_return r.has_value();
}

// Both must finish; the first failure cancels the other and is the one rethrown.
template <class T>
awaitable<T> both(awaitable<T> main, awaitable<void> other) {
  auto r = co_await detail::run_pair(std::move(main), std::move(other), asio::experimental::wait_for_one_error());
  if (r.first_error) std::rethrow_exception(r.first_error);
  if (r.second_error) std::rethrow_exception(r.second_error);
  co_return std::move(r.value);
}

inline awaitable<void> both(awaitable<void> main, awaitable<void> other) {
  co_await both(detail::finished(std::move(main)), std::move(other));
}

}  // namespace pxfer::net
