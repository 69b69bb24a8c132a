#include "data_stream.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <optional>

#include <spdlog/spdlog.h>

#include "net/frame_io.hpp"
#include "pxfer/retry.hpp"

namespace pxfer {

namespace asio = boost::asio;

// A connection that breaks or stalls is replaced after a growing pause (its blocks went to the
// other streams meanwhile); once the policy's retries are spent in a row the slot is given up,
// and the transfer fails only when every slot was.
net::awaitable<void> run_data_stream(std::shared_ptr<transfer::Transfer> t, std::uint16_t index, wire::Token token,
                                     std::shared_ptr<const ControlLink> link, ClientOptions opt) {
  auto ex = co_await asio::this_coro::executor;
  const RetryPolicy& policy = stream_reconnect_policy;
  for (unsigned failures = 0;;) {
    std::optional<Error> failure;
    bool moved = false;
    try {
      auto& stats = t->stream(index);
      auto socket = co_await connect_socket(ex, link->data_endpoints, t->settings().tuning, opt.connect_timeout,
                                            link->authority, &stats.local);
      std::shared_ptr<net::Connection> conn = co_await open_data_connection(socket, opt.encrypt, *link);
      wire::Message attach = wire::Attach{token, index};
      co_await net::send_message(*conn, attach);
      // The server's nonce, answered under the transfer's key (issue 11): the token alone,
      // which an observer of a clear stream sees, joins nothing.
      wire::Message challenge_message = co_await net::read_message(*conn);
      auto challenge = net::expect<wire::AttachChallenge>(std::move(challenge_message), conn->peer());
      const MacKey transfer_key = t->data_key();
      wire::Message proof = wire::AttachProof{attach_proof(transfer_key, token, index, challenge.nonce)};
      co_await net::send_message(*conn, proof);
      wire::Message reply = co_await net::read_message(*conn);
      auto ok = net::expect<wire::AttachOk>(std::move(reply), conn->peer());
      const MacKey block_key = stream_block_key(transfer_key, index, challenge.nonce);
      stats.remote.requested = opt.window;
      stats.remote.sndbuf = ok.sndbuf;
      stats.remote.rcvbuf = ok.rcvbuf;
      if (!t->claim_stream(index, conn)) co_return;  // the transfer ended meanwhile
      spdlog::debug("stream {} attached: local {}, server {}", index, describe(stats.local), describe(stats.remote));
      moved = true;
      co_await t->run_stream(conn, index, block_key);
      co_return;
    } catch (const Error& e) {
      failure = e;
    } catch (const std::exception& e) {
      failure = Error(Errc::internal, std::string("data stream: ") + e.what());
    }
    if (t->over()) co_return;  // finished, or failed for a reason already reported
    if (moved) failures = 0;   // it worked for a while
    if (!retryable(failure->code(), RetryScope::connection) || ++failures > policy.retries) {
      t->give_up_stream(index, *failure);
      co_return;
    }
    const auto pause = policy.delay_before(failures + 1, 0.5);
    spdlog::debug("stream {}: {}; reconnecting in {} ms", index, failure->what(), pause.count());
    asio::steady_timer timer(ex, pause);
    co_await timer.async_wait(asio::as_tuple(asio::use_awaitable));
    if (t->over()) co_return;
  }
}

}  // namespace pxfer
