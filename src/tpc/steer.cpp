// The steering client of a third-party copy (pxfer/tpc/tpc.hpp): STAT at the source, a grant from the
// passive server, TPC_START to the active one, then its TPC_PROGRESS frames until TPC_DONE.
#include "pxfer/tpc/tpc.hpp"

#include <boost/asio/signal_set.hpp>
#include <boost/asio/this_coro.hpp>
#include <algorithm>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>

#include "client/connect.hpp"
#include "net/frame_io.hpp"
#include "net/race.hpp"
#include "pxfer/client/interrupt_watch.hpp"
#include "pxfer/client/retrying.hpp"
#include "pxfer/common/interruption.hpp"
#include "client/path_names.hpp"
#include "pxfer/common/log_safe.hpp"
#include "pxfer/core/stream_count.hpp"
#include "pxfer/core/stream_meter.hpp"

namespace pxfer {
namespace {

using net::awaitable;

struct Plan {
  Url source, dest;
  CopyMode mode;
  const ClientOptions& options;
  ProgressListener* listener;
  std::shared_ptr<ClientTrust> source_trust, dest_trust;  // each server's own credentials
  Clock::time_point deadline;  // Clock::time_point::max() = none
  const std::atomic<bool>* cancel;  // nullptr = not cancellable
};

bool cancelled(const Plan& p) { return p.cancel && p.cancel->load(); }

// Closes both control connections once the copy is cancelled (checked every 50 ms) or `over`.
awaitable<void> close_on_cancel(const Plan& p, std::shared_ptr<net::Connection> a, std::shared_ptr<net::Connection> b,
                                std::shared_ptr<std::atomic<bool>> over) {
  boost::asio::steady_timer timer(co_await boost::asio::this_coro::executor);
  while (!*over) {
    if (cancelled(p)) {
      a->close();
      b->close();
      co_return;
    }
    timer.expires_after(std::chrono::milliseconds(50));
    co_await timer.async_wait(boost::asio::use_awaitable);
  }
}

awaitable<wire::Message> ask(ControlLink& link, const wire::Message& request, std::chrono::milliseconds timeout) {
  co_await net::send_message(*link.connection, request);
  auto reply = co_await net::read_message_within(*link.connection, timeout);
  if (!reply) throw Error(Errc::network, link.authority + " did not answer within " +
                                             std::to_string(timeout.count() / 1000) + " s");
  co_return std::move(*reply);
}

void require_tpc(const ControlLink& link) {
  if ((link.hello.capabilities & wire::cap_tpc) == 0)
    throw Error(Errc::protocol, link.authority + " does not offer third-party copy (an older pxferd); "
                                                 "copy through this host instead: pxfer get, then pxfer put");
}

std::uint32_t open_flags(const ClientOptions& o) {
  return (o.overwrite ? wire::open_overwrite : 0u) | (o.resume ? 0u : wire::open_no_resume) |
         (o.sync ? wire::open_sync : 0u) | (o.encrypt ? wire::open_encrypt : 0u) |
         (o.stream_stats ? wire::open_want_stats : 0u);
}

// -p auto reaches the active server's copy when it can run the controller (cap_tpc_auto_streams):
// TPC_START then carries auto's ceiling; an older server gets auto's starting count, fixed.
wire::TpcStart start_message(const Plan& p, const wire::TpcGrant& grant, const std::string& fingerprint,
                             std::uint64_t active_caps) {
  const bool pull = p.mode == CopyMode::pull;
  const Url& peer = pull ? p.source : p.dest;
  wire::TpcStart m;
  m.mode = pull ? wire::CopyMode::pull : wire::CopyMode::push;
  m.checksum = static_cast<std::uint8_t>(p.options.checksum);
  m.flags = open_flags(p.options);
  m.streams = p.options.streams;
  if (p.options.auto_streams && (active_caps & wire::cap_tpc_auto_streams) != 0) {
    m.streams = stream_count(asking(StreamRequest{true, p.options.streams}, p.options.max_streams)).slots;
    m.has_auto = true;
    m.auto_streams = 1;
  }
  m.block_size = p.options.block_size;
  m.interval_ms = static_cast<std::uint32_t>(p.options.perf_interval.count());
  m.stall_timeout_ms = static_cast<std::uint32_t>(p.options.stall_timeout.count());
  m.local_path = pull ? p.dest.path : p.source.path;
  m.peer_url = peer.to_string();
  m.grant = grant.secret;
  m.peer_fingerprint = fingerprint;
  return m;
}

// TPC_PROGRESS frames to rate lines until TPC_DONE (or the active server's ERROR).
awaitable<void> follow(ControlLink& active, const Plan& p, TransferSummary& summary) {
  RateMeter meter(Clock::now());
  StreamMeter per_stream(Clock::now());  // --stream-stats: the sending server's view of each stream
  // The active server reports every interval even while its copy waits for a slot.
  const auto silence = p.options.stall_timeout + p.options.perf_interval * 3 + std::chrono::seconds(30);
  for (;;) {
    const auto now = Clock::now();
    if (now >= p.deadline) throw Error(Errc::network, "the third-party copy timed out (its time limit passed)");
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(p.deadline - now);
    auto next = co_await net::read_message_within(*active.connection, std::min(silence, left + std::chrono::milliseconds(1)));
    if (!next && Clock::now() >= p.deadline) continue;  // the deadline, not the server's silence
    if (!next) throw Error(Errc::network, active.authority + " sent no progress of the third-party copy for " +
                                              std::to_string(silence.count() / 1000) + " s");
    wire::Message message = std::move(*next);
    if (auto* progress = std::get_if<wire::TpcProgress>(&message)) {
      const auto sampled_at = Clock::now();  // not `now`: the loop's own is in scope (-Wshadow)
      IntervalReport r{meter.sample(sampled_at, progress->bytes), {}};
      // (None before the copy's first interval on the server: the meter keeps the last figures.)
      if (p.options.stream_stats && !progress->streams.empty()) r.streams = per_stream.sample(sampled_at, progress->streams);
      if (p.listener) p.listener->on_interval(r);
      continue;
    }
    auto done = net::expect<wire::TpcDone>(std::move(message), "third-party copy (" + active.authority + ")");
    summary.bytes = done.bytes;  // the file's size, as for put and get
    summary.resumed_bytes = done.resumed_bytes;
    summary.seconds = done.elapsed_ms / 1000.0;
    summary.streams = done.streams;
    summary.block_size = done.block_size;
    summary.checksum = static_cast<ChecksumAlgo>(done.checksum);
    summary.checksum_value = log_safe(done.value);
    summary.stream_recoveries = done.stream_recoveries;
    summary.stream_choice = log_safe(done.stream_choice);  // the active server's auto, when it ran one
    summary.block_copies = done.block_copies;  // 0 from a server without cap_tpc_end_counts
    summary.streams_let_go = done.streams_let_go;
    if (p.options.stream_stats) summary.stream_totals = per_stream.totals(Clock::now());
    const std::uint64_t moved = done.bytes - std::min(done.bytes, done.resumed_bytes);
    if (p.listener) p.listener->on_finish(IntervalReport{meter.sample(Clock::now(), moved), {}}, summary);
    co_return;
  }
}

// The attempt's control connections, for an interruption to close.
using OpenLinks = std::vector<std::shared_ptr<net::Connection>>;

awaitable<void> attempt_body(const Plan& p, TransferSummary& summary, OpenLinks& open) {
  const auto timeout = p.options.connect_timeout;
  ControlLink src = co_await open_control(p.source, timeout, p.source_trust);
  open.push_back(src.connection);
  ControlLink dst = co_await open_control(p.dest, timeout, p.dest_trust);
  open.push_back(dst.connection);
  require_tpc(src);
  require_tpc(dst);
  wire::Message ask_stat = wire::Stat{p.source.path};
  auto reply = co_await ask(src, ask_stat, timeout);
  auto stat = net::expect<wire::StatOk>(std::move(reply), p.source.to_string());
  if (stat.entry.kind != wire::EntryKind::file)
    throw Error(Errc::usage, p.source.to_string() + " is a directory; a third-party copy moves one file");
  const bool pull = p.mode == CopyMode::pull;
  ControlLink& passive = pull ? src : dst;
  ControlLink& active = pull ? dst : src;
  wire::Message ask_grant = wire::TpcGrantRequest{pull ? wire::Direction::get : wire::Direction::put,
                                                  open_flags(p.options) & wire::open_overwrite, stat.entry.size,
                                                  pull ? p.source.path : p.dest.path};
  reply = co_await ask(passive, ask_grant, timeout);
  auto grant = net::expect<wire::TpcGrant>(std::move(reply), passive.authority);
  // The active server must meet the certificate this client verified, and no other.
  wire::Message start =
      start_message(p, grant, passive.trust->verified_fingerprint(passive.authority), active.hello.capabilities);
  summary.bytes = stat.entry.size;
  summary.identity = log_safe(active.auth.identity);
  // Between the servers as between a client and a server: every block authenticated (issue 11),
  // inside TLS with --encrypt.
  summary.protection = std::string("third-party copy (") + (pull ? "pull" : "push") + "), data " +
                       (p.options.encrypt ? "encrypted TLS1.3" : "authenticated (Poly1305 per block, not encrypted)") +
                       " between the servers";
  if (p.listener) p.listener->on_start(summary);
  auto over = std::make_shared<std::atomic<bool>>(false);
  if (p.cancel)
    boost::asio::co_spawn(co_await boost::asio::this_coro::executor,
                          close_on_cancel(p, src.connection, dst.connection, over), boost::asio::detached);
  try {
    co_await net::send_message(*active.connection, start);
    co_await follow(active, p, summary);
  } catch (const Error&) {
    *over = true;
    if (cancelled(p)) throw Error(Errc::interrupted, "the third-party copy was cancelled; both servers stopped it");
    throw;
  }
  *over = true;
}

// Ctrl-C or SIGTERM: the attempt's connections close (no read on them outlives the signal), the
// active server sees its client leave and cancels the copy (keeping the partial file for a
// resume), and the command ends (issue 34).
awaitable<void> interrupted(OpenLinks& open) {
  boost::asio::signal_set signals(co_await boost::asio::this_coro::executor, SIGINT, SIGTERM);
  if (interruption_signal() == 0) {
    auto [ec, signo] = co_await signals.async_wait(net::use_tuple);
    if (ec) co_return;
    if (interrupt_watch_alive()) note_interruption(signo);
  }
  for (const auto& connection : open) connection->close();
  throw interruption_error("the third-party copy was cancelled on the servers (run the same command again to resume)");
}

awaitable<void> attempt(const Plan& p, TransferSummary& summary) {
  OpenLinks open;
  co_await net::first_of(attempt_body(p, summary, open), interrupted(open));
}

}  // namespace

TransferSummary copy_between_servers(const Url& source, const Url& dest, const ClientOptions& options, CopyMode mode,
                                     ProgressListener* listener, const ClientSecurity* security,
                                     std::chrono::milliseconds timeout, const ClientSecurity* dest_security,
                                     const std::atomic<bool>* cancel) {
  if (source.trailing_slash) throw Error(Errc::usage, source.to_string() + ": names a directory; name a file");
  auto trust = security ? std::make_shared<ClientTrust>(*security) : current_trust();
  auto dest_trust = dest_security ? std::make_shared<ClientTrust>(*dest_security) : trust;
  const auto deadline = timeout.count() > 0 ? Clock::now() + timeout : Clock::time_point::max();
  Plan plan{source, dest, mode, options, listener, trust, dest_trust, deadline, cancel};
  if (plan.dest.trailing_slash) plan.dest.path += basename_of(source.path);
  TransferSummary summary;
  summary.direction = mode == CopyMode::pull ? Direction::get : Direction::put;
  summary.source = source.to_string();
  summary.destination = plan.dest.to_string();
  summary.checksum = options.checksum;
  // Each attempt asks for a new grant (a used one cannot log in again), under the one orchestrator.
  summary.attempts = run_attempts(options.retry, [&](unsigned number) {
    summary.attempts = number;  // the summary line is printed inside the attempt that succeeds
    run_io(1, [&](boost::asio::io_context&) { return attempt(plan, summary); });
  }, listener);
  return summary;
}

}  // namespace pxfer
