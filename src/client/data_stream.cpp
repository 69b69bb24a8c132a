#include "data_stream.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <optional>

#include <spdlog/spdlog.h>

#include "net/frame_io.hpp"
#include "net/race.hpp"
#include "pxfer/io/socket_tuning.hpp"
#include "pxfer/core/retry.hpp"
#include "plan/negotiate.hpp"

namespace pxfer {

namespace asio = boost::asio;

namespace {

// A data stream joined to its transfer, and the key its blocks are authenticated under.
struct Attached {
  std::shared_ptr<net::Connection> conn;
  MacKey block_key;
};

// What gives a connection whose stream ended cleanly to the session's pool for its next file:
// nothing when this pxferd closes data connections after one stream (no cap_kept_streams).
transfer::Transfer::CleanEnd pool_for_next_file(const ControlLink& link, const ClientOptions& opt) {
  if (!(link.hello.capabilities & wire::cap_kept_streams)) return {};
  return [pool = link.idle_streams, kind = kind_of(opt)](std::shared_ptr<net::Connection> c) {
    pool->give(std::move(c), kind);
  };
}

// Connects (or takes `reused`, a connection kept from an earlier file), says ATTACH and proves
// the stream belongs to the transfer (issue 11): a nonce (the server's ATTACH_CHALLENGE, or with
// cap_attach_proven one drawn here and sent with ATTACH) is answered under the
// transfer's key from the control connection's TLS session, so the token alone, which an observer
// of a clear stream sees, joins nothing. Every reply has a deadline (issue 16): a server whose
// kernel accepts while the process is stopped is a stall.
net::awaitable<Attached> attach_stream(std::shared_ptr<transfer::Transfer> t, std::uint16_t index, wire::Token token,
                                       std::shared_ptr<const ControlLink> link, ClientOptions opt,
                                       std::shared_ptr<net::Connection> reused) {
  auto ex = co_await asio::this_coro::executor;
  auto& stats = t->stream(index);
  std::shared_ptr<net::Connection> conn = std::move(reused);
  if (conn) {
    stats.local = read_buffers(conn->socket().native_handle(), t->settings().tuning.window);
  } else {
    auto socket = co_await connect_socket(ex, link->data_endpoints, t->settings().tuning, opt.connect_timeout,
                                          link->authority, &stats.local);
    conn = co_await open_data_connection(socket, opt.encrypt, *link);
  }
  // With cap_attach_proven the proof goes with ATTACH, under a nonce drawn here: no challenge's
  // round trip before the stream's first block.
  wire::Attach attach{token, index};
  attach.has_proof = (link->hello.capabilities & wire::cap_attach_proven) != 0;
  AttachNonce nonce{};
  if (attach.has_proof) {
    nonce = random_nonce();
    attach.nonce = nonce;
    attach.mac = t->attach_proof_on(*conn, token, index, nonce);
  }
  const wire::Message attach_message = attach;  // named: g++ 12 and temporaries across co_await
  co_await net::send_message(*conn, attach_message);
  const auto limit = std::max(t->settings().stall_timeout, std::chrono::milliseconds(1000));
  auto read_reply = [&](const char* what) -> net::awaitable<wire::Message> {
    for (;;) {
      auto reply = co_await net::read_message_within(*conn, limit);
      if (!reply)
        throw Error(Errc::network, "pxferd at " + link->authority + " did not answer " + what + " of stream " +
                                       std::to_string(index) + " within " + std::to_string(limit.count() / 1000) + " s");
      // A kept connection may still hold a heartbeat the server sent as its last stream ended.
      if (!std::holds_alternative<wire::Ping>(*reply)) co_return std::move(*reply);
    }
  };
  if (!attach.has_proof) {
    nonce = net::expect<wire::AttachChallenge>(co_await read_reply("ATTACH"), link->authority).nonce;
    wire::Message proof = wire::AttachProof{t->attach_proof_on(*conn, token, index, nonce)};
    co_await net::send_message(*conn, proof);
  }
  const MacKey transfer_key = t->data_key();
  wire::Message answer = co_await read_reply(attach.has_proof ? "ATTACH" : "ATTACH_PROOF");
  // Proven but refused (the transfer ended while this stream was connecting, or its slot is still
  // held): pxferd keeps such a connection for another ATTACH, so the session's next file can use it.
  if (const auto* refused = std::get_if<wire::ErrorMsg>(&answer);
      refused && refused->code == static_cast<std::uint16_t>(Errc::network))
    if (auto keep = pool_for_next_file(*link, opt)) keep(conn);
  auto ok = net::expect<wire::AttachOk>(std::move(answer), link->authority);
  stats.remote.requested = opt.window;
  stats.remote.sndbuf = ok.sndbuf;
  stats.remote.rcvbuf = ok.rcvbuf;
  co_return Attached{std::move(conn), stream_block_key(transfer_key, index, nonce)};
}

// A stream that attached as its transfer ended (the other streams had moved every block) and
// could not claim its slot: pxferd's side of it is running and has nothing to move, so END both
// ways (within a second) leaves the connection clean, and the session's next file can use it.
net::awaitable<bool> end_unclaimed(net::Connection& conn, transfer::Role role) {
  const wire::Message end = wire::End{};
  if (role == transfer::Role::send) co_await net::send_message(conn, end);
  for (;;) {
    auto m = co_await net::read_message_within(conn, std::chrono::milliseconds(1000));
    if (!m || !(std::holds_alternative<wire::Ping>(*m) || std::holds_alternative<wire::End>(*m))) co_return false;
    if (std::holds_alternative<wire::End>(*m)) break;
  }
  if (role == transfer::Role::receive) co_await net::send_message(conn, end);
  co_return true;
}

// Ends once the transfer is over (finished or failed), so a stream still connecting or waiting
// for ATTACH_OK is abandoned at once instead of holding the client until its deadline.
net::awaitable<void> until_over(std::shared_ptr<transfer::Transfer> t) {
  asio::steady_timer timer(co_await asio::this_coro::executor);
  while (!t->over()) {
    timer.expires_after(std::chrono::milliseconds(100));
    co_await timer.async_wait(asio::as_tuple(asio::use_awaitable));
  }
}

}  // namespace

StreamPool::Kind kind_of(const ClientOptions& opt) { return StreamPool::Kind{opt.encrypt, transfer::client_tuning(opt)}; }

// A connection that breaks or stalls is replaced after a growing pause (its blocks went to the
// other streams meanwhile); once the policy's retries are spent in a row the slot is given up,
// and the transfer fails only when every slot was.
net::awaitable<void> run_data_stream(std::shared_ptr<transfer::Transfer> t, std::uint16_t index, wire::Token token,
                                     std::shared_ptr<const ControlLink> link, ClientOptions opt,
                                     std::shared_ptr<net::Connection> reused) {
  auto ex = co_await asio::this_coro::executor;
  // The limit and the pauses: the one RetryCount every retry loop asks (pxfer/core/retry.hpp).
  RetryCount count(stream_reconnect_policy, RetryScope::connection);
  for (;;) {
    std::optional<Error> failure;
    bool moved = false;
    const bool on_kept = reused != nullptr;
    try {
      auto& stats = t->stream(index);
      auto attached = co_await net::first_of(attach_stream(t, index, token, link, opt, std::move(reused)), until_over(t));
      reused.reset();
      if (!attached) co_return;  // the transfer ended meanwhile
      std::shared_ptr<net::Connection> conn = std::move(attached->conn);
      const MacKey block_key = attached->block_key;
      // Kept for the session's next file once the stream ended cleanly: before the transfer counts
      // as done, so that file finds it.
      const transfer::Transfer::CleanEnd keep = pool_for_next_file(*link, opt);
      if (!t->claim_stream(index, conn)) {  // the transfer ended meanwhile
        if (keep && co_await end_unclaimed(*conn, t->role())) keep(conn);
        co_return;
      }
      spdlog::debug("stream {} attached{}: local {}, server {}", index, on_kept ? " on a connection made before (kept, or opened beside OPEN)" : "",
                    describe(stats.local), describe(stats.remote));
      moved = true;
      co_await t->run_stream(conn, index, block_key, keep);
      co_return;
    } catch (const Error& e) {
      failure = e;
    } catch (const std::exception& e) {
      failure = Error(Errc::internal, std::string("data stream: ") + e.what());
    }
    reused.reset();
    if (t->over()) co_return;  // finished, or failed for a reason already reported
    // A kept connection the server closed meanwhile (its idle deadline, a restart): a new one at
    // once, not counted against the stream.
    if (on_kept && !moved) {
      spdlog::debug("stream {}: the kept connection is gone ({}); connecting a new one", index, failure->what());
      continue;
    }
    if (moved) count.reset();  // it worked for a while: the count starts again
    const auto pause = count.after_failure(failure->code(), 0.5);  // no jitter in this policy
    if (!pause) {
      t->give_up_stream(index, *failure);
      co_return;
    }
    spdlog::debug("stream {}: {}; reconnecting in {} ms", index, failure->what(), pause->count());
    // In slices, so an interrupted or failed transfer does not keep the client for the pause.
    asio::steady_timer timer(ex);
    for (auto until = Clock::now() + *pause; Clock::now() < until && !t->over();) {
      timer.expires_after(std::min<Clock::duration>(until - Clock::now(), std::chrono::milliseconds(100)));
      co_await timer.async_wait(asio::as_tuple(asio::use_awaitable));
    }
    if (t->over()) co_return;
  }
}

}  // namespace pxfer
