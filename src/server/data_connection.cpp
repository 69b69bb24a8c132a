#include "data_connection.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <chrono>
#include <optional>

#include "net/frame_io.hpp"
#include "pxfer/core/limits.hpp"
#include "transfer_service.hpp"

namespace pxfer::server {

// A data connection carries one stream at a time. Once a stream ended cleanly (END both ways),
// the same client may attach the connection to its next file: one more ATTACH, proven under that
// transfer's key like any other (issue 12.3, client/stream_pool.hpp). Anything else, or nothing
// within limits::idle_data_stream, ends it; so does an ATTACH without a valid proof.
// An ATTACH naming a small-file channel hands the connection to its control session: true then.
net::awaitable<bool> serve_data_connection(const SessionContext& cx, std::shared_ptr<net::Connection> conn,
                                           wire::Attach attach) {
  if (auto slot = cx.transfers.small_channels().find(attach.token)) {
    std::weak_ptr<SmallChannels::Slot> session = slot;
    const bool joined = co_await SmallChannels::join(std::move(slot), conn, attach, cx.options.hello_timeout);
    if (!joined) co_return false;
    cx.metrics.small_channels.fetch_add(1, std::memory_order_relaxed);
    // Stays until the session drops the channel, so the connection keeps counting against
    // --max-connections and the listener still closes it at shutdown.
    boost::asio::steady_timer wait(co_await boost::asio::this_coro::executor);
    while (!session.expired() && !cx.stopping) {
      wait.expires_after(std::chrono::seconds(1));
      co_await wait.async_wait(boost::asio::as_tuple(boost::asio::use_awaitable));
    }
    co_return true;
  }
  for (bool kept = false;; kept = true) {
    const bool clean = co_await cx.transfers.attach(conn, attach, kept);
    if (!clean) co_return false;
    const auto deadline = std::chrono::steady_clock::now() + limits::idle_data_stream;
    std::optional<wire::Message> next;
    // A heartbeat the client sent as the stream ended may come first.
    do {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) co_return false;
      next = co_await net::read_login_message_within(*conn, left);
      if (!next) co_return false;
    } while (std::holds_alternative<wire::Ping>(*next));
    auto* again = std::get_if<wire::Attach>(&*next);
    if (!again) {
      Error unexpected(Errc::protocol, "expected ATTACH on a data connection whose stream ended");
      co_await net::send_error_quietly(*conn, unexpected);
      co_return false;
    }
    attach = *again;
  }
}

}  // namespace pxfer::server
