#include "job.hpp"

#include <openssl/sha.h>
#include <unistd.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <filesystem>
#include <mutex>

#include <spdlog/spdlog.h>

#include "data_stream.hpp"
#include "early_streams.hpp"
#include "kept_link.hpp"
#include "stream_tuner.hpp"
#include "local_tree.hpp"
#include "pxfer/io/socket_tuning.hpp"
#include "pxfer/client/interrupt_watch.hpp"
#include "pxfer/common/interruption.hpp"
#include "pxfer/common/log_safe.hpp"
#include "net/frame_io.hpp"
#include "net/tls.hpp"
#include "net/quiet_wait.hpp"
#include "net/race.hpp"
#include "pxfer/common/error.hpp"
#include "io/file_io.hpp"
#include "plan/negotiate.hpp"
#include "engine/transfer.hpp"

namespace pxfer {
namespace {

namespace asio = boost::asio;
using net::awaitable;

// What the rate lines and the per-stream view are made of, sampled each interval.
class Progress {
 public:
  Progress(transfer::Transfer& t, bool per_stream, Clock::time_point start, bool peer_figures)
      : transfer_(t), per_stream_(per_stream), meter_(start), streams_(start) {
    // In a get the server sends: only its figures show cwnd, Send-Q and retransmits.
    if ((per_stream_ || peer_figures) && t.role() == transfer::Role::receive)
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

  // The sending side's figures: this side's in a put, the server's STATS in a get.
  std::vector<wire::StreamFigures> figures() {
    if (transfer_.role() == transfer::Role::send) return transfer_.local_figures();
    std::lock_guard lock(mutex_);
    return peer_.empty() ? transfer_.local_figures() : peer_;
  }

 private:
  transfer::Transfer& transfer_;
  bool per_stream_;
  RateMeter meter_;
  StreamMeter streams_;
  std::mutex mutex_;
  std::vector<wire::StreamFigures> peer_;
};

// Loops until cancelled by the transfer finishing (see first_of in run_engine).
awaitable<void> report_progress(Progress& progress, ProgressListener& listener, std::chrono::milliseconds interval) {
  co_await asio::this_coro::throw_if_cancelled(false);  // a cancelled wait ends it quietly (below)
  asio::steady_timer timer(co_await asio::this_coro::executor);
  for (;;) {
    timer.expires_after(interval);
    const bool cancelled = co_await net::wait_unless_cancelled(timer);
    if (cancelled) co_return;  // the transfer ended: quietly (net/quiet_wait.hpp)
    listener.on_interval(progress.sample());
  }
}

std::string congestion_of_stream(transfer::Transfer& t) {
  const auto& wanted = t.settings().tuning.congestion;
  return wanted.empty() ? system_congestion_control() : wanted;
}

// Ctrl-C or a kill ends the job within a second whatever it waits for (resolve, connect, TLS,
// OPEN, data): the transfer fails through its normal path, so the receiver's temporary file is
// removed or kept for a resume as the retry table says, and the control connection is closed so
// that no read on it outlives the signal. wait() runs beside the job (net::first_of), on the
// job's strand, so it never races the job's own code.
class InterruptGuard {
 public:
  InterruptGuard(asio::any_io_executor ex, std::optional<ControlLink>& link) : signals_(ex, SIGINT, SIGTERM), link_(link) {}
  // From now on a signal fails `t`.
  void watch(std::shared_ptr<transfer::Transfer> t) { transfer_ = std::move(t); }
  // Returns when cancelled (the job ended first); throws Error(interrupted) on a signal, or at
  // once when the command was interrupted before this job began (issue 34: no file starts then).
  awaitable<void> wait() {
    int signo = interruption_signal();
    if (signo == 0) {
      auto [ec, caught] = co_await signals_.async_wait(net::use_tuple);
      if (ec) co_return;
      signo = caught;
      if (interrupt_watch_alive()) note_interruption(signo);  // the whole command stops, not only this job
    }
    Error error(Errc::interrupted, std::string("interrupted by ") + (signo == SIGTERM ? "SIGTERM" : "SIGINT") +
                                       "; nothing was kept under the destination name (run the same command "
                                       "again to resume)");
    if (transfer_) transfer_->fail(error);
    if (link_ && link_->connection) link_->connection->close();
    throw error;
  }

 private:
  asio::signal_set signals_;
  std::optional<ControlLink>& link_;
  std::shared_ptr<transfer::Transfer> transfer_;
};

// The reply to OPEN: QUEUED frames while the server holds the transfer in line, and heartbeats
// left over from the previous transfer on a reused control connection, are passed over.
// With a `deadline` (OPEN), each frame must come within it: QUEUED comes about once a second, so
// only a server that stopped answering misses it.
awaitable<wire::Message> read_open_reply(net::Connection& control, ProgressListener* listener,
                                         std::chrono::milliseconds deadline, const std::string& far_end) {
  for (;;) {
    wire::Message reply;
    if (deadline.count() > 0) {
      auto within = co_await net::read_message_within(control, deadline);
      if (!within)
        throw Error(Errc::network, far_end + " stopped answering: no reply to OPEN within " +
                                       std::to_string(deadline.count() / 1000) + " s");
      reply = std::move(*within);
    } else {
      reply = co_await net::read_message(control);
    }
    if (std::holds_alternative<wire::Ping>(reply) || std::holds_alternative<wire::Pong>(reply)) continue;
    auto* queued = std::get_if<wire::Queued>(&reply);
    if (!queued) co_return reply;
    if (listener) listener->on_queued(queued->position, queued->active, queued->queued);
  }
}

// Sends a request (OPEN, SUM, ...) and reads the answer; on a kept connection the server closed
// meanwhile, once more on a fresh one (kept_link.hpp): nothing was started on the old one.
awaitable<wire::Message> ask(std::optional<ControlLink>& link, bool reused, const wire::Message& request, const Url& remote,
                             std::chrono::milliseconds connect_timeout, ProgressListener* listener,
                             std::chrono::milliseconds deadline = {}) {
  auto exchange = [&]() -> awaitable<wire::Message> {
    const std::string far_end = "pxferd at " + link->authority;  // named: g++ 12 and temporaries across co_await
    co_await net::send_message(*link->connection, request);
    co_return co_await read_open_reply(*link->connection, listener, deadline, far_end);
  };
  auto untouched = [] { return true; };  // an answer ends the exchange: a failure means none came
  co_return co_await once_more_if_stale(link, reused, remote, connect_timeout, exchange, untouched);
}

}  // namespace

awaitable<bool> control_to(std::optional<ControlLink>& link, const Url& remote, std::chrono::milliseconds connect_timeout,
                           std::shared_ptr<ClientTrust> trust) {
  const bool reused = link && link->authority == remote.authority();
  if (!reused) {
    link.reset();
    link = co_await open_control(remote, connect_timeout, std::move(trust));
  }
  co_return reused;
}

namespace {

// The receiving engine, or the error the server must hear before the client gives up.
std::shared_ptr<transfer::Transfer> make_receiver(asio::any_io_executor ex, const Job& job,
                                                  const wire::OpenOk& ok, const transfer::Settings& settings,
                                                  std::optional<Error>& refused) {
  const ClientOptions& opt = job.options;
  try {
    SinkOptions sink{opt.overwrite, opt.resume, opt.sync, ok.block_size, ok.mtime_ns, opt.partial_max_age.count()};
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
  s.protection = describe_protection(*link.connection, job.options.encrypt, plan.settings.tls_bound_streams);
  s.identity = log_safe(link.auth.identity);  // the server chose it: shown, so escaped
  if (ok.has_admission) {
    s.server_load = ServerLoad{true, ok.active, ok.queued, ok.max_active};
    spdlog::debug("server load: {} active, {} queued, max_active {}", ok.active, ok.queued, ok.max_active);
  }
  if (!plan.warning.empty()) s.warnings.push_back(plan.warning);
}

void finish_summary(Job& job, transfer::Transfer& t, Progress& progress, Clock::time_point start,
                    const StreamController* auto_streams) {
  TransferSummary& s = job.summary;
  if (auto_streams) {
    s.streams = auto_streams->target();
    s.stream_choice = auto_streams->evidence();
  }
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
  s.block_copies = t.block_copies();
  s.streams_let_go = t.streams_let_go();
  s.send_window = t.send_window_account();
  IntervalReport last = progress.sample();
  if (job.options.stream_stats) s.stream_totals = progress.totals();
  if (job.listener) {
    for (const auto& w : s.warnings) job.listener->on_warning(w);
    job.listener->on_finish(last, s);
  }
}

// The rate lines and -p auto's tuner beside the control exchange; each runs until cancelled.
awaitable<void> watchers(std::optional<awaitable<void>> report, std::optional<awaitable<void>> tune) {
  if (report && tune) co_await net::first_of(std::move(*report), std::move(*tune));
  else if (report) co_await std::move(*report);
  else if (tune) co_await std::move(*tune);
}

// Stream `i` on the connection made for it while OPEN crossed the path (client/early_streams.hpp).
awaitable<void> run_early_stream(std::shared_ptr<EarlyStreams> early, std::shared_ptr<transfer::Transfer> t,
                                 std::uint16_t i, wire::Token token, std::shared_ptr<const ControlLink> link,
                                 ClientOptions opt) {
  auto conn = co_await early->take(i);
  co_await run_data_stream(std::move(t), i, token, std::move(link), std::move(opt), std::move(conn));
}

// Data streams, the control exchange and the rate lines until the transfer ends; the checksum.
awaitable<std::string> run_engine(asio::io_context& ioc, Job& job, std::shared_ptr<transfer::Transfer> t,
                                  const ControlLink& link, const transfer::ClientPlan& plan, const wire::Token& token,
                                  Progress& progress, StreamController* auto_streams, std::shared_ptr<EarlyStreams> early) {
  const ClientOptions& opt = job.options;
  std::optional<awaitable<void>> report, tune;
  // An empty file, or one the receiver already has whole, needs no data connection.
  if (!t->nothing_to_move() && !plan.on_control) {
    auto shared_link = std::make_shared<const ControlLink>(link);
    const StreamPool::Kind kind = kind_of(opt);
    auto spawn = [&ioc, t, token, shared_link, opt, kind](std::uint16_t i) {
      // A connection kept from the session's last file, on whose strand its stream must run.
      auto kept = shared_link->idle_streams->take(kind);
      auto ex = kept ? kept->socket().get_executor() : asio::any_io_executor(asio::make_strand(ioc));
      asio::co_spawn(ex, run_data_stream(t, i, token, shared_link, opt, std::move(kept)), asio::detached);
    };
    const std::uint16_t first = auto_streams ? auto_streams->target() : plan.settings.streams;
    for (std::uint16_t i = 0; i < first; ++i) {
      if (early && i < early->count())
        asio::co_spawn(early->executor(i), run_early_stream(early, t, i, token, shared_link, opt), asio::detached);
      else
        spawn(i);
    }
    if (early) early->release(first);  // to the pool: where a stream the tuner adds looks first
    if (auto_streams && !auto_streams->settled())
      tune = tune_streams(StreamTuning{t, auto_streams, spawn, [&progress] { return progress.figures(); },
                                        opt.stream_stats ? job.listener : nullptr});
  }
  if (job.listener && opt.perf_interval.count() > 0) report = report_progress(progress, *job.listener, opt.perf_interval);
  if (report || tune) {
    auto result = co_await net::first_of(t->run_control(link.connection, plan.on_control), watchers(std::move(report), std::move(tune)));
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

namespace {

// The transfer's id: the same for every retry of this job and for a rerun of the same command on
// this host (the source's size and mtime included), so the server can tell a retry of a put it
// committed already, or of one still running there for a client that died, from a new transfer.
// The host name and the working directory are read once per process (neither changes during a
// run), not per file: uname and getcwd for every small file of a batch.
const std::string& host_name() {
  static const std::string name = [] {
    char host[256] = {};
    ::gethostname(host, sizeof host - 1);
    return std::string(host);
  }();
  return name;
}

std::string absolute_path(const std::string& path) {
  static const std::filesystem::path cwd = [] {
    std::error_code ec;
    return std::filesystem::current_path(ec);
  }();
  std::filesystem::path p(path);
  if (p.is_relative() && !cwd.empty()) p = cwd / p;
  return p.lexically_normal().string();
}

wire::Token transfer_id_of(const Job& job, const std::optional<transfer::SourceFacts>& facts) {
  return transfer_id_of(job.direction, job.local, job.remote, facts);
}

}  // namespace

wire::Token transfer_id_of(Direction direction, const std::string& local_path, const Url& remote,
                           const std::optional<transfer::SourceFacts>& facts) {
  const std::string local = absolute_path(local_path);
  std::string text = std::string("pxfer transfer id\n") + host_name() + '\n' + (direction == Direction::put ? "put" : "get") +
                     '\n' + local + '\n' + remote.to_string() + '\n';
  if (facts) text += std::to_string(facts->size) + '\n' + std::to_string(facts->mtime_ns) + '\n';
  unsigned char digest[SHA256_DIGEST_LENGTH];
  ::SHA256(reinterpret_cast<const unsigned char*>(text.data()), text.size(), digest);
  wire::Token id{};
  std::copy_n(digest, id.size(), id.begin());
  return id;
}

namespace {

// The control connection's smoothed RTT (TCP_INFO), 0 when unknown: it has crossed the path a few
// times by now (TCP, TLS, HELLO), before any data stream opens.
double rtt_ms(net::Connection& control) {
  TcpSnapshot tcp;
  return read_tcp_info(control.socket().native_handle(), tcp) && tcp.rtt_us > 0 ? tcp.rtt_us / 1000.0 : 0;
}

// OPEN and its answer; the reply is OPEN_OK (an ERROR becomes the server's refusal).
awaitable<wire::OpenOk> open_transfer(asio::io_context& ioc, Job& job, std::optional<ControlLink>& link,
                                      bool& link_clean, std::shared_ptr<ClientTrust> trust,
                                      const std::optional<transfer::SourceFacts>& facts, wire::Message& open_message,
                                      std::shared_ptr<EarlyStreams>& early) {
  const ClientOptions& opt = job.options;
  const bool reused = co_await control_to(link, job.remote, opt.connect_timeout, std::move(trust));
  open_message = transfer::make_open(job.direction, opt, link->hello, facts, job.remote.path);
  auto& open = std::get<wire::Open>(open_message);
  open.has_transfer_id = (link->hello.capabilities & wire::cap_heartbeat) != 0;  // an older server refuses it
  open.transfer_id = transfer_id_of(job, facts);
  // The first streams' connections are made beside OPEN's round trip, not after it; the session's
  // pool may hold some already (its last file's).
  const std::size_t wanted = transfer::early_stream_count(opt, open), kept = link->idle_streams->size();
  if (wanted > kept)
    early = EarlyStreams::start(ioc, *link, opt, kind_of(opt), static_cast<std::uint16_t>(wanted - kept));
  const auto deadline = std::max(opt.stall_timeout, opt.connect_timeout);
  wire::Message reply = co_await ask(link, reused, open_message, job.remote, opt.connect_timeout, job.listener, deadline);
  // A refusal (not found, exists, permission) leaves the server's session ready for the next OPEN.
  link_clean = std::holds_alternative<wire::ErrorMsg>(reply);
  auto ok = net::expect<wire::OpenOk>(std::move(reply), link->connection->peer());
  link_clean = false;
  co_return ok;
}

// -p auto's controller for this transfer.
StreamControllerSettings auto_settings(const transfer::ClientPlan& plan, transfer::Transfer& t, const wire::OpenOk& ok,
                                       net::Connection& control) {
  StreamControllerSettings tuning;
  // The sender's congestion control: this side's in a put; in a get the server's, as OPEN_OK
  // names it (an older server does not: then --congestion's, which both ends use, or unknown).
  if (t.role() == transfer::Role::send) tuning.sender_congestion = congestion_of_stream(t);
  else tuning.sender_congestion = ok.has_congestion ? ok.congestion : t.settings().tuning.congestion;
  tuning.start = plan.start_streams;
  tuning.ceiling = plan.settings.streams;
  // The control connection's RTT sizes a long path's start before any data stream opens (a stream
  // opened later ramps up that much later).
  tuning.path_rtt_ms = rtt_ms(control);
  // A get's streams are the server's to end: it sheds them through RETIRE where the server can.
  tuning.can_shed = t.role() == transfer::Role::send || plan.settings.retire_streams;
  // A put counts acknowledged blocks; a get's received bytes are counted as they arrive.
  if (t.role() == transfer::Role::send) tuning.min_phase_bytes = 32ull * plan.settings.block_size;
  return tuning;
}

awaitable<void> run_job_body(asio::io_context& ioc, Job& job, std::optional<ControlLink>& link, bool& link_clean,
                             std::shared_ptr<ClientTrust> trust, InterruptGuard& interrupted) {
  const ClientOptions& opt = job.options;
  link_clean = false;
  auto ex = co_await asio::this_coro::executor;
  std::optional<FileSource> source;
  std::optional<transfer::SourceFacts> facts;
  if (job.direction == Direction::put) {
    Directory cwd = Directory::current();  // a put's source only: a get opens beneath its target
    source.emplace(cwd, job.local);
    facts = transfer::SourceFacts{source->size(), source->mtime_ns()};
  } else if (!opt.overwrite && ::access(job.local.c_str(), F_OK) == 0) {
    throw Error(Errc::exists, job.local + ": destination exists; use --overwrite to replace it");
  }

  wire::Message open_message;
  std::shared_ptr<EarlyStreams> early;
  // However the job ends, a connection no stream took goes to the session's pool.
  struct ReleaseEarly {
    std::shared_ptr<EarlyStreams>& early;
    ~ReleaseEarly() {
      if (early) early->release();
    }
  } release_early{early};
  wire::OpenOk ok = co_await open_transfer(ioc, job, link, link_clean, std::move(trust), facts, open_message, early);
  const auto& open = std::get<wire::Open>(open_message);
  std::shared_ptr<net::Connection> control = link->connection;
  const transfer::ClientPlan plan = transfer::client_plan(opt, open, ok, link->hello.capabilities);
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
  t->set_far_end("pxferd at " + link->authority);
  interrupted.watch(t);
  // The transfer's key from the control connection's TLS session, as the server derived it.
  t->set_data_key(net::export_keying_material(*control, std::string(data_exporter_label), ok.token));
  co_await t->exchange_have(*control);
  if (job.listener) t->on_stream_event([listener = job.listener](const std::string& text) { listener->on_stream_event(text); });
  if (job.listener) t->on_window_event([listener = job.listener](const std::string& text) { listener->on_streams_changed(text); });
  start_summary(job, *t, *link, plan, ok);
  if (job.listener) job.listener->on_start(job.summary);

  const auto start = Clock::now();
  Progress progress(*t, opt.stream_stats, start, opt.auto_streams);
  std::optional<StreamController> auto_streams;
  if (opt.auto_streams) auto_streams.emplace(auto_settings(plan, *t, ok, *control), start);
  std::optional<Error> failure;
  try {
    job.summary.checksum_value =
        co_await run_engine(ioc, job, t, *link, plan, ok.token, progress, auto_streams ? &*auto_streams : nullptr, early);
  } catch (const Error& e) {
    failure = e;
  }
  // A get whose file was verified and renamed into place here is done, even when RESULT could not
  // reach the server afterwards: a retry would only find the destination existing.
  const auto committed_here = t->committed_here();
  const bool result_lost = failure && committed_here.has_value();
  if (result_lost) {
    spdlog::debug("the file is in place; the server may not have heard so: {}", failure->what());
    job.summary.checksum_value = *committed_here;
    failure.reset();
  }
  if (failure) {
    t->fail(*failure);
    co_await net::send_error_quietly(*control, *failure);
    throw *failure;
  }
  link_clean = !result_lost;
  finish_summary(job, *t, progress, start, auto_streams ? &*auto_streams : nullptr);
}

}  // namespace

awaitable<void> run_job(asio::io_context& ioc, Job& job, std::optional<ControlLink>& link, bool& link_clean,
                        std::shared_ptr<ClientTrust> trust) {
  auto ex = co_await asio::this_coro::executor;
  InterruptGuard interrupted(ex, link);
  co_await net::first_of(run_job_body(ioc, job, link, link_clean, std::move(trust), interrupted), interrupted.wait());
}

}  // namespace pxfer
