// The multi-file scheduler: workers each take the next file while fewer than the target are in
// flight (`concurrency`, or --auto's choice) and move it in the worker's ClientSession (one control
// connection kept from file to file, new data streams per file), so one failing file never stops
// the others.
#include "pxfer/client/batch.hpp"

#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <mutex>
#include <thread>

#include "pxfer/client/interrupt_watch.hpp"
#include "pxfer/client/retrying.hpp"
#include "pxfer/common/interruption.hpp"
#include "pxfer/core/rate_meter.hpp"
#include "pxfer/core/stream_count.hpp"
#include "client/remote_tree.hpp"
#include "local_tree.hpp"
#include "path_names.hpp"

namespace pxfer {
namespace fs = std::filesystem;

BatchShape fit_streams(unsigned concurrency, std::uint16_t streams, unsigned max_streams) {
  BatchShape shape{std::max(1u, concurrency), std::max<std::uint16_t>(1, streams)};
  // Fewer streams per file first: files in flight are what a many-small-files run needs.
  if (max_streams > 0) shape.concurrency = std::min(shape.concurrency, max_streams);
  StreamInputs count = asking(StreamRequest{false, shape.streams});
  count.budget = max_streams;
  count.files_in_flight = shape.concurrency;
  shape.streams = stream_count(count).slots;
  return shape;
}

namespace {

// Files are named as the user named their source: a local path for a put, a URL for a get.
std::optional<std::uint64_t> local_size(const std::string& path) {
  std::error_code ec;
  auto status = fs::status(path, ec);
  if (ec || !fs::is_regular_file(status)) return std::nullopt;
  return fs::file_size(path, ec);
}

// --skip-existing: both copies exist with the same size and the same checksum (--checksum's
// algorithm, adler32 with --checksum none), the same test in both directions. The server reads
// its copy only when the sizes match; the local copy is read only when the server's matched.
bool same_file_exists(ClientSession& session, const BatchFile& f, const ClientOptions& options) {
  auto here = local_size(f.local);
  if (!here) return false;
  if (f.direction == Direction::get && f.source_size && *f.source_size != *here) return false;
  const ChecksumAlgo algo = options.checksum == ChecksumAlgo::none ? ChecksumAlgo::adler32 : options.checksum;
  std::optional<RemoteSum> there;
  try {
    there = session.remote_sum(f.remote, algo, *here, options.connect_timeout);
  } catch (const Error& e) {
    if (e.code() != Errc::not_found) throw;
    return false;
  }
  return there->size == *here && !there->value.empty() && there->value == checksum_of_file(algo, f.local);
}

// --preserve after a put: the local file's permission bits and modification time, set on the
// server's copy.
void preserve_remote_attributes(ClientSession& session, const BatchFile& f, const ClientOptions& options) {
  struct stat st {};
  if (::stat(f.local.c_str(), &st) != 0) {
    int err = errno;
    throw Error(errc_from_errno(err), "cannot read the mode and mtime of " + f.local + ": " + errno_text(err));
  }
  const std::int64_t mtime_ns = static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
  session.set_remote_attributes(f.remote, st.st_mode & 07777, mtime_ns, options.connect_timeout);
}

// --preserve after a get: the source's permission bits and modification time.
void preserve_attributes(const BatchFile& f, const ClientOptions& options) {
  std::optional<std::uint32_t> mode = f.mode;
  std::optional<std::int64_t> mtime = f.mtime_ns;
  if (!mode || !mtime) {
    auto entry = stat_remote(f.remote, options.connect_timeout);
    if (!entry) throw Error(Errc::not_found, f.remote.to_string() + ": vanished before its mode and mtime were read");
    mode = entry->mode;
    mtime = entry->mtime_ns;
  }
  if (::chmod(f.local.c_str(), *mode) != 0) {
    int err = errno;
    throw Error(errc_from_errno(err), "cannot set the mode of " + f.local + ": " + errno_text(err));
  }
  struct timespec times[2];
  times[0].tv_sec = 0;
  times[0].tv_nsec = UTIME_OMIT;
  times[1].tv_sec = *mtime / 1'000'000'000;
  times[1].tv_nsec = *mtime % 1'000'000'000;
  if (::utimensat(AT_FDCWD, f.local.c_str(), times, 0) != 0) {
    int err = errno;
    throw Error(errc_from_errno(err), "cannot set the mtime of " + f.local + ": " + errno_text(err));
  }
}

// Adds a file's progress to the run's byte counter (bytes moved by every file so far). Each
// attempt starts from zero again: a retry moves its bytes again.
class ByteCounter final : public ProgressListener {
 public:
  explicit ByteCounter(std::atomic<std::uint64_t>& total) : total_(total) {}
  void on_interval(const IntervalReport& report) override { add_up_to(report.total.bytes); }
  void on_finish(const IntervalReport& report, const TransferSummary&) override { add_up_to(report.total.bytes); }
  void new_attempt() { seen_ = 0; }

 private:
  void add_up_to(std::uint64_t bytes) {
    if (bytes <= seen_) return;
    total_ += bytes - seen_;
    seen_ = bytes;
  }
  std::atomic<std::uint64_t>& total_;
  std::uint64_t seen_ = 0;
};

// One file under the client's RetryPolicy, through the one orchestrator (pxfer/client/retrying.hpp):
// each attempt checks --skip-existing, moves the file (one attempt of the session's) and sets
// --preserve's attributes. `failed_attempt` hears of every attempt that failed, retried or not.
FileOutcome move_one(ClientSession& session, const BatchFile& f, const BatchOptions& options, const ClientOptions& client,
                     ByteCounter* counter, const std::function<void(const Error&)>& failed_attempt) {
  FileOutcome outcome{f, FileStatus::failed, {}, std::nullopt, 0};
  outcome.streams = client.streams;
  auto attempt = [&](unsigned n) {
    outcome.attempts = n;
    if (counter) counter->new_attempt();
    try {
      if (options.skip_existing && same_file_exists(session, f, client)) {
        outcome.status = FileStatus::skipped;
        return;
      }
      if (f.direction == Direction::put) {
        outcome.summary = session.put(f.local, f.remote, client, counter, n);
        if (options.preserve) preserve_remote_attributes(session, f, client);
      } else {
        outcome.summary = session.get(f.remote, f.local, client, counter, n);
        if (options.preserve) preserve_attributes(f, client);
      }
      outcome.status = FileStatus::done;
    } catch (const Error&) {
      throw;
    } catch (const std::exception& e) {
      throw Error(Errc::internal, source_name(f) + ": " + e.what());
    }
  };
  try {
    run_attempts(client.retry, attempt, nullptr, failed_attempt);
    outcome.error.reset();
  } catch (const Error& e) {
    outcome.status = FileStatus::failed;
    outcome.error = e;
  }
  return outcome;
}

// One control connection per server, directories in plan order (parents first).
void create_remote_directories(const BatchPlan& plan, const ClientOptions& client, BatchReport& report) {
  std::vector<std::pair<Url, std::vector<std::string>>> by_server;
  for (const auto& dir : plan.remote_directories) {
    auto it = std::find_if(by_server.begin(), by_server.end(),
                           [&](const auto& s) { return s.first.authority() == dir.authority(); });
    if (it == by_server.end()) it = by_server.insert(by_server.end(), {dir, {}});
    it->second.push_back(dir.path);
  }
  for (const auto& [server, paths] : by_server) {
    try {
      make_remote_directories(server, paths, client.connect_timeout);
    } catch (const Error& e) {
      report.setup_errors.push_back(e);
    }
  }
}

}  // namespace

std::chrono::milliseconds ramp_start(unsigned index, unsigned concurrency, std::chrono::milliseconds ramp_up) {
  if (concurrency <= 1 || ramp_up.count() <= 0) return std::chrono::milliseconds(0);
  return std::chrono::milliseconds(ramp_up.count() * std::min(index, concurrency - 1) / (concurrency - 1));
}

namespace {

// One run of run_batch: the shared state of its workers and of the thread that samples the run.
// Workers take the next file while fewer than `target` files are in flight; --auto moves the
// target between decisions (idle workers wait, and start again when it rises).
class BatchRun {
 public:
  BatchRun(const BatchPlan& plan, const BatchOptions& options, ProgressListener& listener)
      : plan_(plan), options_(options), listener_(listener), start_(Clock::now()),
        shape_(fit_streams(options.concurrency, options.client.streams, options.max_streams)),
        pacer_(options.connect_rate) {
    report_.planned = plan.files.size();
    if (options.auto_tune) make_controller();
    monitor_ = controller_ || options.interval.count() > 0;
    base_ = session_options();
    small_frames_ = options.small_file_frames && !options.skip_existing && !options.preserve;
    target_ = controller_ ? controller_->concurrency() : shape_.concurrency;
    streams_ = controller_ ? controller_->streams() : shape_.streams;
  }

  BatchReport run() {
    new_directories_ = make_local_tree(plan_, report_.setup_errors);
    create_remote_directories(plan_, options_.client, report_);
    for (const auto& e : report_.setup_errors)
      if (!report_.first_failure) report_.first_failure = e.code();
    std::vector<std::thread> workers;
    const unsigned pool = controller_ ? controller_->max_concurrency() : shape_.concurrency;
    const unsigned count = std::min<std::size_t>(pool, std::max<std::size_t>(1, plan_.files.size()));
    for (unsigned i = monitor_ ? 0 : 1; i < count; ++i) workers.emplace_back([this, i] { worker(i); });
    if (monitor_) sample_until_done();
    else worker(0);
    for (auto& w : workers) w.join();
    if (interruption_signal() != 0) report_.first_failure = Errc::interrupted;
    report_.seconds = std::chrono::duration<double>(Clock::now() - start_).count();
    return std::move(report_);
  }

 private:
  void make_controller() {
    AutoLimits limits{options_.min_concurrency, options_.concurrency, options_.client.streams, options_.max_streams};
    controller_.emplace(limits, start_, AutoSettings{options_.auto_tolerance, 0.5});
    // The server's own limits, unless the caller already knows them: the first file's server
    // (an unreachable one fails each file on its own, with a clear message, below).
    ServerLimits server = options_.server_limits;
    if (!server.max_concurrency && !server.max_streams && !plan_.files.empty()) {
      try {
        server = server_limits(plan_.files.front().remote, options_.client.connect_timeout);
      } catch (const Error&) {
      }
    }
    controller_->apply_server_limits(server);
  }

  ClientOptions session_options() const {
    ClientOptions base = options_.client;
    base.small_files_on_control = true;
    base.local_root = plan_.local_root;
    // Files in flight already keep the cores busy: each worker's session gets its share of them
    // rather than a thread per stream, which with many small files mostly costs context switches
    // (2000 x 64 KiB put -r, -c 4 -p 4, 2 cores, loopback: 105 -> 120 MB/s, three rounds each).
    if (base.threads == 0) {
      const unsigned pool = options_.auto_tune ? options_.concurrency : shape_.concurrency;
      const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
      base.threads = std::clamp(cores / std::max(1u, pool), 1u, std::max<unsigned>(1, base.streams));
    }
    // No per-file rate lines in a batch; when the run is sampled, each file reports its bytes
    // (to the counter, never printed) often enough for the aggregate rate.
    base.perf_interval = monitor_ ? std::chrono::milliseconds(100) : std::chrono::milliseconds(0);
    return base;
  }

  double seconds_since_start() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }

  void worker(unsigned index) {
    if (!controller_) std::this_thread::sleep_until(start_ + ramp_start(index, shape_.concurrency, options_.ramp_up));
    // Each worker keeps its control connection from file to file: small files then cost an OPEN
    // and their data connection, not a TLS handshake and a login each.
    ClientSession session(base_);
    // Ctrl-C: the file in flight fails now (kept for a resume), and no other starts (issue 34).
    const auto stop = on_interruption([&] {
      session.abort();
      std::lock_guard lock(mutex_);
      changed_.notify_all();
    });
    for (;;) {
      std::unique_lock lock(mutex_);
      changed_.wait(lock, [&] { return next_ >= plan_.files.size() || active_ < target_ || interruption_signal(); });
      if (interruption_signal() != 0) abandon_the_rest();
      if (next_ >= plan_.files.size()) return;
      std::vector<std::size_t> run = take_small_run();
      const std::size_t i = run.empty() ? next_++ : run.front();
      ++active_;
      ClientOptions client = base_;
      client.streams = streams_;
      // -p auto per file: from -p's start up to this file's share of --max-streams, or of one
      // transfer's ceiling (64) without it, so the files in flight (--auto's or -c's) and the
      // streams each file's controller may grow to are decided together: 8 files in flight
      // grow to 8 streams each, not to 8 x 64 connections.
      if (client.auto_streams)
        client.max_streams =
            fit_streams(target_, limits::max_streams, options_.max_streams > 0 ? options_.max_streams : limits::max_streams).streams;
      lock.unlock();
      if (!run.empty()) {
        move_small_run(session, run, client);
        lock.lock();
      } else {
        FileOutcome outcome = move_file(session, i, client);
        lock.lock();
        record(std::move(outcome));
      }
      --active_;
      changed_.notify_all();
    }
  }

  // Under mutex_: the next files when they are small (limits::max_small_file, their size known),
  // in the same direction and to the same server as the first, at most small_run files; else none.
  // A run is long enough to keep limits::small_files_in_flight requests going for most of it, short
  // enough that the workers end together.
  std::vector<std::size_t> take_small_run() {
    constexpr std::size_t small_run = 4 * limits::small_files_in_flight;
    std::vector<std::size_t> run;
    if (!small_frames_) return run;
    auto small = [](const BatchFile& f) { return f.source_size && *f.source_size <= limits::max_small_file; };
    const BatchFile& first = plan_.files[next_];
    while (next_ < plan_.files.size() && run.size() < small_run) {
      const BatchFile& f = plan_.files[next_];
      if (!small(f) || f.direction != first.direction || f.remote.authority() != first.remote.authority()) break;
      run.push_back(next_++);
    }
    return run;
  }

  // A run of small files pipelined on the worker's session. A file the fast path could not take
  // (an older server, a file grown meanwhile) or that failed in a way a retry may mend moves again
  // the ordinary way, under the retry policy; the others are final.
  void move_small_run(ClientSession& session, const std::vector<std::size_t>& run, const ClientOptions& client) {
    std::vector<SmallFile> files;
    files.reserve(run.size());
    for (std::size_t i : run) {
      const BatchFile& f = plan_.files[i];
      const bool fresh = f.direction == Direction::get && new_directories_.contains(parent_of(f.local));
      files.push_back(SmallFile{f.direction, f.local, f.remote, fresh});
    }
    const double started_s = seconds_since_start();
    std::vector<std::pair<std::size_t, bool>> again;  // index, and whether its small attempt failed
    session.move_small(files, client, [&](std::size_t k, SmallOutcome o) {
      const std::size_t i = run[k];
      const bool retry = o.kind == SmallOutcome::Kind::fallback ||
                         (o.kind == SmallOutcome::Kind::failed && retryable(o.error->code(), RetryScope::transfer));
      if (retry) {
        again.emplace_back(i, o.kind == SmallOutcome::Kind::failed);
        return;
      }
      FileOutcome outcome;
      outcome.file = plan_.files[i];
      outcome.summary = std::move(o.summary);
      outcome.error = std::move(o.error);
      outcome.attempts = 1;
      outcome.streams = 0;
      if (o.kind == SmallOutcome::Kind::done) {
        outcome.status = FileStatus::done;
        moved_ += outcome.summary.bytes;
      }
      outcome.started_s = started_s;
      outcome.finished_s = seconds_since_start();
      std::lock_guard lock(mutex_);
      listener_.on_file_start(plan_.files[i], i + 1, plan_.files.size(), 0, started_s);
      record(std::move(outcome));
    });
    for (auto [i, failed] : again) {
      FileOutcome outcome = move_file(session, i, client);
      if (failed) settle_lost_answer(session, outcome, client);
      std::lock_guard lock(mutex_);
      record(std::move(outcome));
    }
  }

  // A put whose PUT_SMALL was in flight when its connection broke may have been written by the
  // server after all, from a frame it had already received, while the retry ran: the retry then
  // finds the file in place ("exists"). When that file has the source's size and checksum, it is
  // this file, arrived whole: done, not failed.
  void settle_lost_answer(ClientSession& session, FileOutcome& outcome, const ClientOptions& client) {
    const BatchFile& f = outcome.file;
    if (outcome.status != FileStatus::failed || !outcome.error || outcome.error->code() != Errc::exists ||
        f.direction != Direction::put || client.overwrite)
      return;
    try {
      if (!same_file_exists(session, f, client)) return;
    } catch (const Error&) {
      return;
    }
    outcome.status = FileStatus::done;
    outcome.error.reset();
    outcome.summary.direction = f.direction;
    outcome.summary.source = f.local;
    outcome.summary.destination = f.remote.to_string();
    outcome.summary.bytes = f.source_size.value_or(0);
    moved_ += outcome.summary.bytes;
  }

  FileOutcome move_file(ClientSession& session, std::size_t i, const ClientOptions& client) {
    std::this_thread::sleep_until(pacer_.reserve(Clock::now(), client.streams + 1u));
    const double started_s = seconds_since_start();
    {
      std::lock_guard started(mutex_);
      listener_.on_file_start(plan_.files[i], i + 1, plan_.files.size(), client.streams, started_s);
    }
    std::optional<ByteCounter> counter;
    if (monitor_) counter.emplace(moved_);
    FileOutcome outcome = move_one(session, plan_.files[i], options_, client, counter ? &*counter : nullptr, [&](const Error& e) {
      // Only failures that say something about the link or the server count against it: a
      // missing source or an existing destination does not.
      if (!retryable(e.code(), RetryScope::transfer)) return;
      std::lock_guard failed(mutex_);
      ++interval_failed_;
    });
    outcome.started_s = started_s;
    outcome.finished_s = seconds_since_start();
    return outcome;
  }

  // Under mutex_: the files not started yet never will be (the command was interrupted).
  void abandon_the_rest() {
    for (; next_ < plan_.files.size(); ++next_) report_.unfinished.push_back(source_name(plan_.files[next_]));
    changed_.notify_all();
  }

  // Under mutex_. A file the interruption stopped is named once, in the report's one line.
  void record(FileOutcome outcome) {
    const bool stopped = outcome.status == FileStatus::failed && outcome.error->code() == Errc::interrupted;
    if (stopped) report_.unfinished.push_back(source_name(outcome.file));
    if (outcome.status == FileStatus::done) {
      report_.bytes += outcome.summary.bytes;
      ++interval_done_;
    }
    if (outcome.status == FileStatus::skipped) ++report_.skipped;
    if (outcome.status == FileStatus::failed) {
      ++report_.failed;
      if (!report_.first_failure) report_.first_failure = outcome.error->code();
    }
    report_.files.push_back(std::move(outcome));
    if (!stopped) listener_.on_file(report_.files.back(), report_.files.size(), plan_.files.size());
    changed_.notify_all();  // the sampler waits for every file
  }

  // The calling thread: aggregate progress every options.interval, --auto decisions every
  // options.auto_interval, until every file has finished.
  void sample_until_done() {
    constexpr auto never = Clock::time_point::max();
    auto next_interval = options_.interval.count() > 0 ? start_ + options_.interval : never;
    auto next_decision = controller_ ? start_ + options_.auto_interval : never;
    RateMeter meter(start_);
    std::unique_lock lock(mutex_);
    auto all_finished = [&] {
      return report_.files.size() >= plan_.files.size() || (interruption_signal() != 0 && active_ == 0);
    };
    while (!all_finished()) {
      changed_.wait_until(lock, std::min(next_interval, next_decision), all_finished);
      if (all_finished()) break;
      const auto now = Clock::now();
      if (now >= next_interval) {
        BatchInterval sample{meter.sample(now, moved_.load()), active_, target_, report_.files.size(), plan_.files.size()};
        listener_.on_batch_interval(sample);
        while (next_interval <= now) next_interval += options_.interval;
      }
      if (controller_ && now >= next_decision) {
        AutoDecision d = controller_->decide(now, moved_.load(), interval_done_, interval_failed_);
        interval_done_ = interval_failed_ = 0;
        target_ = controller_->concurrency();
        streams_ = controller_->streams();
        listener_.on_decision(d);
        changed_.notify_all();
        while (next_decision <= now) next_decision += options_.auto_interval;
      }
    }
  }

  const BatchPlan& plan_;
  const BatchOptions& options_;
  ProgressListener& listener_;
  const Clock::time_point start_;
  const BatchShape shape_;
  std::optional<AutoController> controller_;
  bool monitor_ = false;
  bool small_frames_ = false;  // BatchOptions::small_file_frames, when nothing needs a request per file
  ClientOptions base_;
  std::set<std::string> new_directories_;  // made by this run, before the workers start (read-only after)
  RatePacer pacer_;  // --connect-rate: connections per second
  std::atomic<std::uint64_t> moved_{0};
  std::mutex mutex_;  // guards everything below, the report, and serializes the listener
  std::condition_variable changed_;
  BatchReport report_;
  unsigned target_ = 1;
  std::uint16_t streams_ = 1;
  unsigned active_ = 0;
  std::size_t next_ = 0;
  unsigned interval_done_ = 0, interval_failed_ = 0;  // since the last decision
};

}  // namespace

BatchReport run_batch(const BatchPlan& plan, const BatchOptions& options, ProgressListener& listener) {
  return BatchRun(plan, options, listener).run();
}

}  // namespace pxfer
