#include "job.hpp"

#include <unistd.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <fstream>
#include <mutex>

#include <spdlog/spdlog.h>

#include "data_stream.hpp"
#include "local_tree.hpp"
#include "pxfer/log_safe.hpp"
#include "net/frame_io.hpp"
#include "net/tls.hpp"
#include "net/race.hpp"
#include "pxfer/error.hpp"
#include "pxfer/file_io.hpp"
#include "transfer/negotiate.hpp"
#include "transfer/transfer.hpp"

namespace pxfer {
namespace {

namespace asio = boost::asio;
using net::awaitable;

// What the rate lines and the per-stream view are made of, sampled each interval.
class Progress {
 public:
  Progress(transfer::Transfer& t, bool per_stream, Clock::time_point start)
      : transfer_(t), per_stream_(per_stream), meter_(start), streams_(start) {
    // In a get the server sends: only its figures show cwnd, Send-Q and retransmits.
    if (per_stream_ && t.role() == transfer::Role::receive)
      t.on_peer_stats([this](wire::Stats s) {
        std::lock_guard lock(mutex_);
        peer_ = std::move(s.streams);
      });
  }

  IntervalReport sample() {
    auto now = Clock::now();
    IntervalReport r{meter_.sample(now, transfer_.bytes_moved()), {}};
    if (per_stream_) r.streams = streams_.sample(now, figures());
    return r;
  }

  std::vector<StreamTotals> totals() const { return streams_.totals(Clock::now()); }

 private:
  std::vector<wire::StreamFigures> figures() {
    if (transfer_.role() == transfer::Role::send) return transfer_.local_figures();
    std::lock_guard lock(mutex_);
    return peer_.empty() ? transfer_.local_figures() : peer_;
  }
  transfer::Transfer& transfer_;
  bool per_stream_;
  RateMeter meter_;
  StreamMeter streams_;
  std::mutex mutex_;
  std::vector<wire::StreamFigures> peer_;
};

// Loops until cancelled by the transfer finishing (see first_of in run_engine).
awaitable<void> report_progress(Progress& progress, ProgressListener& listener, std::chrono::milliseconds interval) {
  asio::steady_timer timer(co_await asio::this_coro::executor);
  for (;;) {
    timer.expires_after(interval);
    co_await timer.async_wait(asio::use_awaitable);
    listener.on_interval(progress.sample());
  }
}

std::string congestion_of_stream(transfer::Transfer& t) {
  const auto& wanted = t.settings().tuning.congestion;
  if (!wanted.empty()) return wanted;
  std::ifstream in("/proc/sys/net/ipv4/tcp_congestion_control");
  std::string name;
  in >> name;
  return name;
}

// Ctrl-C or a kill ends the transfer through its normal failure path, so the receiver's temporary
// file is removed instead of left behind. Installed when the job starts; the handler runs on the
// job's strand, so it never races the job's own code.
class InterruptGuard {
 public:
  explicit InterruptGuard(asio::any_io_executor ex) : signals_(ex, SIGINT, SIGTERM) {
    signals_.async_wait([this](const boost::system::error_code& ec, int signo) {
      if (ec) return;
      error_ = Error(Errc::interrupted, std::string("interrupted by ") + (signo == SIGINT ? "SIGINT" : "SIGTERM") +
                                            "; nothing was kept under the destination name (run the same command "
                                            "again to resume)");
      if (transfer_) transfer_->fail(*error_);
    });
  }
  // From now on a signal fails `t`; one that came earlier fails it at once.
  void watch(std::shared_ptr<transfer::Transfer> t) {
    transfer_ = std::move(t);
    if (error_) transfer_->fail(*error_);
  }
  void stop() {
    boost::system::error_code ignored;
    signals_.cancel(ignored);
  }

 private:
  asio::signal_set signals_;
  std::shared_ptr<transfer::Transfer> transfer_;
  std::optional<Error> error_;
};

// The reply to OPEN: QUEUED frames while the server holds the transfer in line, and heartbeats
// left over from the previous transfer on a reused control connection, are passed over.
awaitable<wire::Message> read_open_reply(net::Connection& control, ProgressListener* listener) {
  for (;;) {
    wire::Message reply = co_await net::read_message(control);
    if (std::holds_alternative<wire::Ping>(reply) || std::holds_alternative<wire::Pong>(reply)) continue;
    auto* queued = std::get_if<wire::Queued>(&reply);
    if (!queued) co_return reply;
    if (listener) listener->on_queued(queued->position, queued->active, queued->queued);
  }
}

// Sends a request (OPEN, SUM, ...) and reads the answer. A reused control connection may have been
// closed by the server meanwhile (its idle timeout, a restart): then one fresh connection is
// opened and the request sent again (RetryScope::connection); nothing was started on the old one.
awaitable<wire::Message> ask(std::optional<ControlLink>& link, bool reused, const wire::Message& request, const Url& remote,
                             std::chrono::milliseconds connect_timeout, ProgressListener* listener) {
  for (;;) {
    std::optional<Error> stale;
    try {
      co_await net::send_message(*link->connection, request);
      co_return co_await read_open_reply(*link->connection, listener);
    } catch (const Error& e) {
      if (!reused || !retryable(e.code(), RetryScope::connection)) throw;
      stale = e;
    }
    spdlog::debug("reused control connection to {} is gone ({}); opening a new one", link->authority, stale->what());
    auto trust = link->trust;
    link.reset();
    link = co_await open_control(remote, connect_timeout, trust);
    reused = false;
  }
}

// The session's control connection to `remote`'s server: the kept one, or a new one. Returns
// whether it was kept (and so may turn out to be closed: see ask).
awaitable<bool> control_to(std::optional<ControlLink>& link, const Url& remote, std::chrono::milliseconds connect_timeout,
                           std::shared_ptr<ClientTrust> trust) {
  const bool reused = link && link->authority == remote.authority();
  if (!reused) {
    link.reset();
    link = co_await open_control(remote, connect_timeout, std::move(trust));
  }
  co_return reused;
}

// The receiving engine, or the error the server must hear before the client gives up.
std::shared_ptr<transfer::Transfer> make_receiver(asio::any_io_executor ex, const Job& job,
                                                  const wire::OpenOk& ok, const transfer::Settings& settings,
                                                  std::optional<Error>& refused) {
  const ClientOptions& opt = job.options;
  try {
    SinkOptions sink{opt.overwrite, opt.resume, opt.sync, ok.block_size, ok.mtime_ns};
    // Beneath the directory the user named (get -r): a server's names cannot lead out of it.
    LocalTarget at = local_target(opt.local_root, job.local);
    return transfer::Transfer::receiving(ex, std::make_unique<FileSink>(at.dir, at.path, ok.size, sink), settings);
  } catch (const Error& e) {
    refused = e;
    return nullptr;
  }
}

void start_summary(Job& job, transfer::Transfer& t, const ControlLink& link, const transfer::ClientPlan& plan,
                   const wire::OpenOk& ok) {
  TransferSummary& s = job.summary;
  s.bytes = t.file_size();
  s.streams = plan.settings.streams;
  s.block_size = ok.block_size;
  s.checksum = job.options.checksum;
  s.protection = describe_protection(*link.connection, job.options.encrypt);
  s.identity = log_safe(link.auth.identity);  // the server chose it: shown, so escaped
  if (ok.has_admission) {
    s.server_load = ServerLoad{true, ok.active, ok.queued, ok.max_active};
    spdlog::debug("server load: {} active, {} queued, max_active {}", ok.active, ok.queued, ok.max_active);
  }
  if (!plan.warning.empty()) s.warnings.push_back(plan.warning);
}

void finish_summary(Job& job, transfer::Transfer& t, Progress& progress, Clock::time_point start) {
  TransferSummary& s = job.summary;
  s.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  s.local_buffers = t.stream(0).local;
  s.remote_buffers = t.stream(0).remote;
  // One warning per end is enough: every stream asked for the same window.
  if (auto w = clamp_warning(s.local_buffers); !w.empty()) s.warnings.push_back(w);
  if (auto w = clamp_warning(s.remote_buffers, "the server's kernel"); !w.empty()) s.warnings.push_back(w);
  s.congestion = congestion_of_stream(t);
  s.compression = job.options.compression;
  s.wire_bytes = t.wire_bytes();
  s.resumed_bytes = t.resumed_bytes();
  s.stream_recoveries = t.stream_recoveries();
  IntervalReport last = progress.sample();
  if (job.options.stream_stats) s.stream_totals = progress.totals();
  if (job.listener) {
    for (const auto& w : s.warnings) job.listener->on_warning(w);
    job.listener->on_finish(last, s);
  }
}

// Data streams, the control exchange and the rate lines until the transfer ends; the checksum.
awaitable<std::string> run_engine(asio::io_context& ioc, Job& job, std::shared_ptr<transfer::Transfer> t,
                                  const ControlLink& link, const transfer::ClientPlan& plan, const wire::Token& token,
                                  Progress& progress) {
  const ClientOptions& opt = job.options;
  // An empty file, or one the receiver already has whole, needs no data connection.
  if (!t->nothing_to_move() && !plan.on_control) {
    auto shared_link = std::make_shared<const ControlLink>(link);
    for (std::uint16_t i = 0; i < plan.settings.streams; ++i)
      asio::co_spawn(asio::make_strand(ioc), run_data_stream(t, i, token, shared_link, opt), asio::detached);
  }
  if (job.listener && opt.perf_interval.count() > 0) {
    auto result = co_await net::first_of(t->run_control(link.connection, plan.on_control),
                                         report_progress(progress, *job.listener, opt.perf_interval));
    co_return result.value_or("");
  }
  co_return co_await t->run_control(link.connection, plan.on_control);
}

}  // namespace

awaitable<void> run_request(std::optional<ControlLink>& link, const Url& remote, std::chrono::milliseconds connect_timeout,
                            const wire::Message& request, wire::Message& reply, std::shared_ptr<ClientTrust> trust) {
  const bool reused = co_await control_to(link, remote, connect_timeout, std::move(trust));
  reply = co_await ask(link, reused, request, remote, connect_timeout, nullptr);
}

awaitable<void> run_job(asio::io_context& ioc, Job& job, std::optional<ControlLink>& link, bool& link_clean,
                        std::shared_ptr<ClientTrust> trust) {
  const ClientOptions& opt = job.options;
  link_clean = false;
  auto ex = co_await asio::this_coro::executor;
  InterruptGuard interrupted(ex);
  Directory cwd = Directory::current();
  std::optional<FileSource> source;
  std::optional<transfer::SourceFacts> facts;
  if (job.direction == Direction::put) {
    source.emplace(cwd, job.local);
    facts = transfer::SourceFacts{source->size(), source->mtime_ns()};
  } else if (!opt.overwrite && ::access(job.local.c_str(), F_OK) == 0) {
    throw Error(Errc::exists, job.local + ": destination exists; use --overwrite to replace it");
  }

  const bool reused = co_await control_to(link, job.remote, opt.connect_timeout, std::move(trust));
  wire::Message open_message = transfer::make_open(job.direction, opt, link->hello, facts, job.remote.path);
  const auto& open = std::get<wire::Open>(open_message);
  wire::Message reply = co_await ask(link, reused, open_message, job.remote, opt.connect_timeout, job.listener);
  // A refusal (not found, exists, permission) leaves the server's session ready for the next OPEN.
  link_clean = std::holds_alternative<wire::ErrorMsg>(reply);
  std::shared_ptr<net::Connection> control = link->connection;
  auto ok = net::expect<wire::OpenOk>(std::move(reply), control->peer());
  link_clean = false;
  const transfer::ClientPlan plan = transfer::client_plan(opt, open, ok);
  spdlog::debug("server accepted {} of {}: {} bytes, block {}, {} streams", job.direction == Direction::put ? "put" : "get",
                job.remote.path, ok.size, ok.block_size, plan.settings.streams);

  std::shared_ptr<transfer::Transfer> t;
  std::optional<Error> refused;  // no co_await inside a handler
  if (source) t = transfer::Transfer::sending(ex, std::move(*source), plan.settings);
  else t = make_receiver(ex, job, ok, plan.settings, refused);
  if (refused) {
    co_await net::send_error_quietly(*control, *refused);
    throw *refused;
  }
  // The transfer's key from the control connection's TLS session, as the server derived it.
  t->set_data_key(net::export_keying_material(*control, std::string(data_exporter_label), ok.token));
  co_await t->exchange_have(*control);
  if (job.listener) t->on_stream_event([listener = job.listener](const std::string& text) { listener->on_stream_event(text); });
  start_summary(job, *t, *link, plan, ok);
  if (job.listener) job.listener->on_start(job.summary);

  interrupted.watch(t);
  const auto start = Clock::now();
  Progress progress(*t, opt.stream_stats, start);
  std::optional<Error> failure;
  try {
    job.summary.checksum_value = co_await run_engine(ioc, job, t, *link, plan, ok.token, progress);
  } catch (const Error& e) {
    failure = e;
  }
  interrupted.stop();
  if (failure) {
    t->fail(*failure);
    co_await net::send_error_quietly(*control, *failure);
    throw *failure;
  }
  link_clean = true;
  finish_summary(job, *t, progress, start);
}

}  // namespace pxfer
