// The control connection's part of the engine: heartbeats, STATS, COMMIT and RESULT.
#include "transfer_internal.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>
#include <cstdio>
#include <deque>

#include <spdlog/spdlog.h>

#include "net/frame_io.hpp"
#include "net/quiet_wait.hpp"
#include "net/race.hpp"
#include "pxfer/core/rate_meter.hpp"

namespace pxfer::transfer {

namespace asio = boost::asio;
using namespace boost::asio::experimental::awaitable_operators;

awaitable<void> Transfer::report_stats(std::shared_ptr<Connection> control) {
  co_await asio::this_coro::throw_if_cancelled(false);  // a cancelled wait ends it quietly (below)
  asio::steady_timer timer(co_await asio::this_coro::executor);
  for (;;) {
    timer.expires_after(settings_.stats_interval);
    const bool cancelled = co_await net::wait_unless_cancelled(timer);
    if (cancelled) co_return;  // the streams ended: quietly, no exception (keep_control_alive)
    wire::Message stats = wire::Stats{local_figures()};
    co_await net::send_message(*control, stats);  // the write gate keeps frames whole
  }
}

awaitable<std::string> Transfer::commit_exchange(Connection& control) {
  // The control connection is quiet while the blocks move: the sender says it is alive with a
  // PING every heartbeat, and the receiver gives up on a sender (or a path) silent for the stall
  // timeout, so a control connection that a middlebox stopped forwarding cannot hang it.
  std::optional<std::string> checksum;
  control_heard_.store(Clock::now().time_since_epoch().count(), std::memory_order_relaxed);  // silence counts from here
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
  if (streams_on_control_) {
    co_await wait_streams();  // already over: the control connection was the data stream
    if (settings_.stats_interval.count() > 0) {
      wire::Message last = wire::Stats{local_figures()};
      co_await net::send_message(control, last);
    }
    co_return co_await commit_as_sender(control, nullptr);
  }
  // The receiver says nothing on the control connection before RESULT but heartbeats, unless it
  // fails (disk full, cannot create the file): listen for that while the blocks move, so a failure
  // there ends the transfer at once instead of after the streams time out.
  Answers answers(co_await asio::this_coro::executor, 1);
  co_return co_await net::both(send_and_commit(control, answers), watch_peer(control, answers));
}

awaitable<std::string> Transfer::send_and_commit(Connection& control, Answers& answers) {
  if (settings_.stats_interval.count() > 0) {
    co_await net::first_of(wait_streams(), report_stats(control.shared_from_this()));
    wire::Message last = wire::Stats{local_figures()};  // final figures, so totals are complete
    co_await net::send_message(control, last);
  } else {
    co_await wait_streams();
  }
  co_return co_await commit_as_sender(control, &answers);
}

awaitable<void> Transfer::keep_control_alive(Connection& control) {
  // Both ends ping when both offered cap_heartbeat (an older sender would take a receiver's PING
  // for an unexpected message), and both take a control connection silent for the stall timeout
  // for a frozen peer or a dead path: a stopped pxferd still accepts and buffers, it never answers.
  const auto heartbeat = control_heartbeat_of(settings_);
  const auto silence = control_silence_of(settings_);
  const bool pings = role_ == Role::send || settings_.control_heartbeats;
  const bool listens = role_ == Role::receive || settings_.control_heartbeats;
  co_await asio::this_coro::throw_if_cancelled(false);  // a cancelled wait ends it quietly (below)
  asio::steady_timer timer(co_await asio::this_coro::executor);
  for (;;) {
    timer.expires_after(heartbeat);
    // Cancelled when the exchange it watches ends, once per transfer: it ends quietly instead of
    // throwing operation_aborted through every frame above (net/race.hpp tells an outer cancel apart).
    const bool cancelled = co_await net::wait_unless_cancelled(timer);
    if (cancelled) co_return;
    if (listens && !commit_sent_ && StreamRun::since(control_heard_) > silence) {
      char text[64];
      std::snprintf(text, sizeof text, "%g", seconds_of(silence));
      throw Error(Errc::network, far_end(control) + " stopped answering for " + text +
                                     " s (no heartbeat on the control connection): it is frozen or the path is down");
    }
    if (pings) co_await net::send_message(control, ping_message);
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

awaitable<void> Transfer::watch_peer(Connection& control, Answers& answers) {
  wire::Message message = co_await read_control(control);  // the receiver's heartbeats are noted there
  if (std::holds_alternative<wire::Result>(message)) {
    answers.try_send(boost::system::error_code{}, std::move(message));
    co_return;
  }
  auto error = Error(Errc::protocol, "unexpected message on the control connection from " + far_end(control));
  if (auto* e = std::get_if<wire::ErrorMsg>(&message)) error = Error(errc_from_wire(e->code), e->message);
  fail(error);
  throw error;
}

// COMMIT's answer. The receiver flushes the file and checks it before it answers: allow it some
// stall periods (its heartbeats may pause meanwhile), and pass over heartbeats still on their way.
awaitable<wire::Message> Transfer::await_commit_answer(Connection& control, Answers* answers) {
  const auto limit = settings_.stall_timeout * 4;
  const auto deadline = Clock::now() + limit;
  std::optional<wire::Message> reply;
  if (answers) {
    asio::steady_timer timer(co_await asio::this_coro::executor, limit);
    auto got = co_await (answers->async_receive(net::use_tuple) || timer.async_wait(net::use_tuple));
    if (got.index() == 0 && !std::get<0>(std::get<0>(got))) reply = std::move(std::get<1>(std::get<0>(got)));
  } else {
    for (;;) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
      if (left.count() > 0) reply = co_await net::read_message_within(control, left);
      else reply.reset();
      if (!reply || (!std::holds_alternative<wire::Ping>(*reply) && !std::holds_alternative<wire::Pong>(*reply))) break;
    }
  }
  if (!reply)
    throw Error(Errc::network, far_end(control) + " did not answer COMMIT within " +
                                   std::to_string(limit.count() / 1000) + " s");
  co_return std::move(*reply);
}

awaitable<std::string> Transfer::commit_as_sender(Connection& control, Answers* answers) {
  if (!planner_.all_acknowledged()) throw Error(Errc::protocol, "streams ended before every block was acknowledged");
  source_->check_unchanged();
  std::string checksum = digest_->finish();
  wire::Message commit = wire::Commit{file_size(), static_cast<std::uint8_t>(settings_.checksum), checksum};
  commit_sent_ = true;
  co_await net::send_message(control, commit);
  wire::Message reply = co_await await_commit_answer(control, answers);
  auto result = net::expect<wire::Result>(std::move(reply), far_end(control));
  if (result.code != 0) throw Error(errc_from_wire(result.code), result.message);
  if (result.value != checksum)
    throw Error(Errc::integrity, "the receiver confirmed a different checksum (" + result.value + " vs " + checksum + ")");
  if (keep_checksum_of_) store_checksum(source_->fd(), settings_.checksum, checksum, *keep_checksum_of_);
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
  if (settings_.block_copies && planner_.all_acknowledged()) {
    std::lock_guard lock(mutex_);
    let_go_of_redundant_streams();  // the sender is done with them: do not wait for a stalled one
  }
  auto refuse = [&](Error error) -> awaitable<void> {
    wire::Message verdict = wire::Result{static_cast<std::uint16_t>(error.code()), "", error.what()};
    co_await net::send_message(control, verdict);
    throw error;
  };
  std::optional<Error> problem;
  std::string local;
  if (committed_checksum_) {
    // A retry of a put whose RESULT was lost: the same bytes, or a file that is not ours to replace.
    if (commit.bytes == file_size() && commit.checksum == static_cast<std::uint8_t>(settings_.checksum) &&
        commit.value == *committed_checksum_) {
      wire::Message verdict = wire::Result{0, *committed_checksum_, "ok"};
      co_await net::send_message(control, verdict);
      co_return *committed_checksum_;
    }
    problem = Error(Errc::exists, "destination exists with other contents; use --overwrite to replace it");
  } else if (commit.bytes != file_size() || !planner_.all_acknowledged()) {
    problem = Error(Errc::protocol, "the sender committed before every block arrived");
  } else if (commit.checksum != static_cast<std::uint8_t>(settings_.checksum)) {
    problem = Error(Errc::protocol, "the sender used a different checksum algorithm");
  } else if (local = digest_->finish(); local != commit.value) {
    problem = Error(Errc::integrity, sink_->path() + ": checksum mismatch: sender " +
                                         std::string(checksum_name(settings_.checksum)) + " " + commit.value +
                                         ", receiver " + local + "; the file was not kept, rerun the transfer");
  } else {
    try {
      sink_->set_checksum(settings_.checksum, local);
      sink_->commit();
    } catch (const Error& e) {
      problem = e;  // no co_await inside a handler: carried out
    }
  }
  if (problem) co_await refuse(*problem);
  {
    std::lock_guard lock(mutex_);
    committed_here_ = local;
  }
  wire::Message verdict = wire::Result{0, local, "ok"};
  co_await net::send_message(control, verdict);
  co_return local;
}

}  // namespace pxfer::transfer
