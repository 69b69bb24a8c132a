// The control connection's part of the engine: heartbeats, STATS, COMMIT and RESULT.
#include "transfer_internal.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>
#include <cstdio>
#include <deque>

#include <spdlog/spdlog.h>

#include "net/frame_io.hpp"
#include "net/race.hpp"
#include "pxfer/rate_meter.hpp"

namespace pxfer::transfer {

namespace asio = boost::asio;

awaitable<void> Transfer::report_stats(std::shared_ptr<Connection> control) {
  asio::steady_timer timer(co_await asio::this_coro::executor);
  for (;;) {
    timer.expires_after(settings_.stats_interval);
    co_await timer.async_wait(asio::use_awaitable);
    wire::Message stats = wire::Stats{local_figures()};
    co_await net::send_message(*control, stats);  // the write gate keeps frames whole
  }
}

awaitable<std::string> Transfer::commit_exchange(Connection& control) {
  // The control connection is quiet while the blocks move: the sender says it is alive with a
  // PING every heartbeat, and the receiver gives up on a sender (or a path) silent for the stall
  // timeout, so a control connection that a middlebox stopped forwarding cannot hang it.
  std::optional<std::string> checksum;
  if (role_ == Role::send)
    checksum = co_await net::first_of(send_control(control), keep_control_alive(control));
  else
    checksum = co_await net::first_of(net::both(commit_as_receiver(control), wait_streams()), keep_control_alive(control));
  co_return checksum.value_or("");
}

awaitable<std::string> Transfer::run_control(std::shared_ptr<Connection> control, bool streams_on_control) {
  if (!streams_on_control) co_return co_await commit_exchange(*control);
  streams_on_control_ = true;
  if (!nothing_to_move()) {
    if (settings_.streams != 1 || !claim_stream(0, control))
      throw Error(Errc::protocol, "a transfer on the control connection has exactly one stream");
    co_await run_stream(control, 0, control_block_key(data_key()));
  }
  co_return co_await commit_exchange(*control);
}

awaitable<std::string> Transfer::send_control(Connection& control) {
  // The receiver says nothing on the control connection before COMMIT unless it fails (disk
  // full, cannot create the file): listen for that while the blocks move, so a failure there
  // ends the transfer at once instead of after the streams time out.
  std::shared_ptr<Connection> shared_control = control.shared_from_this();
  if (streams_on_control_)
    co_await wait_streams();  // already over: a read left pending on the control connection would eat RESULT
  else if (settings_.stats_interval.count() > 0)
    co_await net::first_of(wait_streams(), net::both(watch_peer(control), report_stats(shared_control)));
  else
    co_await net::first_of(wait_streams(), watch_peer(control));
  if (settings_.stats_interval.count() > 0) {
    wire::Message last = wire::Stats{local_figures()};  // final figures, so totals are complete
    co_await net::send_message(control, last);
  }
  co_return co_await commit_as_sender(control);
}

awaitable<void> Transfer::keep_control_alive(Connection& control) {
  const auto heartbeat = heartbeat_of(settings_);
  asio::steady_timer timer(co_await asio::this_coro::executor);
  for (;;) {
    timer.expires_after(heartbeat);
    co_await timer.async_wait(asio::use_awaitable);
    if (role_ == Role::send) {
      co_await net::send_message(control, ping_message);
    } else if (StreamRun::since(control_heard_) > settings_.stall_timeout) {
      char text[64];
      std::snprintf(text, sizeof text, "%.1f", seconds_of(settings_.stall_timeout));
      throw Error(Errc::network, "the control connection to " + control.peer() + " went silent for " + text +
                                     " s (no heartbeat): the peer or the path is gone");
    }
  }
}

// A control message, heartbeats skipped.
awaitable<wire::Message> Transfer::read_control(Connection& control) {
  for (;;) {
    wire::Message message = co_await net::read_message(control);
    control_heard_.store(Clock::now().time_since_epoch().count(), std::memory_order_relaxed);
    if (!std::holds_alternative<wire::Ping>(message) && !std::holds_alternative<wire::Pong>(message)) co_return message;
  }
}

awaitable<void> Transfer::watch_peer(Connection& control) {
  wire::Message message = co_await net::read_message(control);
  auto error = Error(Errc::protocol, "unexpected message on the control connection from " + control.peer());
  if (auto* e = std::get_if<wire::ErrorMsg>(&message)) error = Error(errc_from_wire(e->code), e->message);
  fail(error);
  throw error;
}

awaitable<std::string> Transfer::commit_as_sender(Connection& control) {
  if (!planner_.all_acknowledged()) throw Error(Errc::protocol, "streams ended before every block was acknowledged");
  source_->check_unchanged();
  std::string checksum = digest_->finish();
  wire::Message commit = wire::Commit{file_size(), static_cast<std::uint8_t>(settings_.checksum), checksum};
  co_await net::send_message(control, commit);
  // The receiver flushes the file and checks it before it answers: allow it some stall periods.
  auto reply = co_await net::read_message_within(control, settings_.stall_timeout * 4);
  if (!reply)
    throw Error(Errc::network, "no answer to COMMIT from " + control.peer() + " within " +
                                   std::to_string(settings_.stall_timeout.count() * 4 / 1000) + " s");
  auto result = net::expect<wire::Result>(std::move(*reply), control.peer());
  if (result.code != 0) throw Error(errc_from_wire(result.code), result.message);
  if (result.value != checksum)
    throw Error(Errc::integrity, "the receiver confirmed a different checksum (" + result.value + " vs " + checksum + ")");
  co_return checksum;
}

awaitable<std::string> Transfer::commit_as_receiver(Connection& control) {
  wire::Message received = co_await read_control(control);
  // The sender's per-stream figures may come first, as many as there were intervals.
  while (auto* stats = std::get_if<wire::Stats>(&received)) {
    if (peer_stats_listener_) peer_stats_listener_(std::move(*stats));
    received = co_await read_control(control);
  }
  auto commit = net::expect<wire::Commit>(std::move(received), control.peer());
  auto refuse = [&](Error error) -> awaitable<void> {
    wire::Message verdict = wire::Result{static_cast<std::uint16_t>(error.code()), "", error.what()};
    co_await net::send_message(control, verdict);
    throw error;
  };
  std::optional<Error> problem;
  std::string local;
  if (commit.bytes != file_size() || !planner_.all_acknowledged()) {
    problem = Error(Errc::protocol, "the sender committed before every block arrived");
  } else if (commit.checksum != static_cast<std::uint8_t>(settings_.checksum)) {
    problem = Error(Errc::protocol, "the sender used a different checksum algorithm");
  } else if (local = digest_->finish(); local != commit.value) {
    problem = Error(Errc::integrity, sink_->path() + ": checksum mismatch: sender " +
                                         std::string(checksum_name(settings_.checksum)) + " " + commit.value +
                                         ", receiver " + local + "; the file was not kept, rerun the transfer");
  } else {
    try {
      sink_->commit();
    } catch (const Error& e) {
      problem = e;  // no co_await inside a handler: carried out
    }
  }
  if (problem) co_await refuse(*problem);
  wire::Message verdict = wire::Result{0, local, "ok"};
  co_await net::send_message(control, verdict);
  co_return local;
}

}  // namespace pxfer::transfer
