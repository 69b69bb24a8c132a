#pragma once
// The one connection-level retry of a kept control connection (issue 38): the session keeps its
// control connection between jobs, and the server may have closed it meanwhile (its idle timeout,
// a restart), which shows only at the next exchange. Then that exchange runs once more on a fresh
// connection. It is not a retry of the transfer: it is not counted, not paused, not announced.
// Used by job.cpp (OPEN, SUM, ...) and small_files.cpp (a pipeline of small files).
#include "pxfer/client/layer.hpp"
#include <chrono>
#include <optional>
#include <type_traits>

#include <spdlog/spdlog.h>

#include "connect.hpp"
#include "pxfer/core/retry.hpp"

namespace pxfer {

// Runs exchange() (an awaitable on `link`). When the link was `reused` and the exchange fails with
// a class retryable(connection) allows while untouched() still holds (the server answered nothing
// on it, so nothing was started there), `link` is replaced by a new connection to `remote` and
// exchange() runs once more; a failure there propagates. Both callables are copied into the frame.
template <class Exchange, class Untouched>
auto once_more_if_stale(std::optional<ControlLink>& link, bool reused, const Url& remote,
                        std::chrono::milliseconds connect_timeout, Exchange exchange, Untouched untouched)
    -> decltype(exchange()) {
  using Result = typename decltype(exchange())::value_type;
  for (;;) {
    std::optional<Error> stale;
    try {
      if constexpr (std::is_void_v<Result>) {
        co_await exchange();
        co_return;
      } else {
        co_return co_await exchange();
      }
    } catch (const Error& e) {
      if (!reused || !untouched() || !retryable(e.code(), RetryScope::connection)) throw;
      stale = e;
    }
    spdlog::debug("kept control connection to {} is gone ({}); opening a new one", link->authority, stale->what());
    auto trust = link->trust;
    link.reset();
    link = co_await open_control(remote, connect_timeout, trust);
    reused = false;
  }
}

}  // namespace pxfer
