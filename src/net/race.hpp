#pragma once
// "Whichever finishes first wins, the other is cancelled": Asio's awaitable || waits for the
// first *successful* completion, so a branch that fails would leave us waiting on the other
// (a progress reporter that never ends, a timer). These helpers end on the first completion,
// success or failure, and rethrow a failure.
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/asio/experimental/parallel_group.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <exception>
#include <optional>

#include "connection.hpp"

namespace pxfer::net {

// `main`'s value when it finishes first; nullopt when `other` finished first.
template <class T>
awaitable<std::optional<T>> first_of(awaitable<T> main, awaitable<void> other) {
  namespace ex = asio::experimental;
  auto executor = co_await asio::this_coro::executor;
  auto [order, main_error, value, other_error] =
      co_await ex::make_parallel_group(asio::co_spawn(executor, std::move(main), asio::deferred),
                                       asio::co_spawn(executor, std::move(other), asio::deferred))
          .async_wait(ex::wait_for_one(), asio::use_awaitable);
  if (order[0] == 0) {
    if (main_error) std::rethrow_exception(main_error);
    co_return std::optional<T>(std::move(value));
  }
  if (other_error) std::rethrow_exception(other_error);
  co_return std::nullopt;
}

// True when `main` finished first.
inline awaitable<bool> first_of(awaitable<void> main, awaitable<void> other) {
  namespace ex = asio::experimental;
  auto executor = co_await asio::this_coro::executor;
  auto [order, main_error, other_error] =
      co_await ex::make_parallel_group(asio::co_spawn(executor, std::move(main), asio::deferred),
                                       asio::co_spawn(executor, std::move(other), asio::deferred))
          .async_wait(ex::wait_for_one(), asio::use_awaitable);
  std::exception_ptr first = order[0] == 0 ? main_error : other_error;
  if (first) std::rethrow_exception(first);
  co_return order[0] == 0;
}

// Both must finish; the first failure cancels the other and is the one rethrown (Asio's && would
// throw multiple_exceptions when the cancelled one fails too, hiding the cause).
template <class T>
awaitable<T> both(awaitable<T> main, awaitable<void> other) {
  namespace ex = asio::experimental;
  auto executor = co_await asio::this_coro::executor;
  auto [order, main_error, value, other_error] =
      co_await ex::make_parallel_group(asio::co_spawn(executor, std::move(main), asio::deferred),
                                       asio::co_spawn(executor, std::move(other), asio::deferred))
          .async_wait(ex::wait_for_one_error(), asio::use_awaitable);
  std::exception_ptr first = order[0] == 0 ? main_error : other_error;
  std::exception_ptr second = order[0] == 0 ? other_error : main_error;
  if (first) std::rethrow_exception(first);
  if (second) std::rethrow_exception(second);
  co_return std::move(value);
}

inline awaitable<void> both(awaitable<void> main, awaitable<void> other) {
  namespace ex = asio::experimental;
  auto executor = co_await asio::this_coro::executor;
  auto [order, main_error, other_error] =
      co_await ex::make_parallel_group(asio::co_spawn(executor, std::move(main), asio::deferred),
                                       asio::co_spawn(executor, std::move(other), asio::deferred))
          .async_wait(ex::wait_for_one_error(), asio::use_awaitable);
  std::exception_ptr first = order[0] == 0 ? main_error : other_error;
  std::exception_ptr second = order[0] == 0 ? other_error : main_error;
  if (first) std::rethrow_exception(first);
  if (second) std::rethrow_exception(second);
}

}  // namespace pxfer::net
