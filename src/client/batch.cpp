// The multi-file scheduler: workers each take the next file while fewer than the target are in
// flight (`concurrency`, or --auto's choice) and move it in the worker's ClientSession (one control
// connection kept from file to file, new data streams per file), so one failing file never stops
// the others.
#include "pxfer/batch.hpp"

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

#include "pxfer/rate_meter.hpp"
#include "pxfer/remote_tree.hpp"
#include "local_tree.hpp"

namespace pxfer {
namespace fs = std::filesystem;

BatchShape fit_streams(unsigned concurrency, std::uint16_t streams, unsigned max_streams) {
  BatchShape shape{std::max(1u, concurrency), std::max<std::uint16_t>(1, streams)};
  if (max_streams == 0 || shape.concurrency * shape.streams <= max_streams) return shape;
  // Fewer streams per file first: files in flight are what a many-small-files run needs.
  shape.concurrency = std::min(shape.concurrency, max_streams);
  shape.streams = static_cast<std::uint16_t>(std::max(1u, max_streams / shape.concurrency));
  return shape;
}

namespace {

// Files are named as the user named their source: a local path for a put, a URL for a get.
std::string source_of(const BatchFile& f) { return f.direction == Direction::put ? f.local : f.remote.to_string(); }

// Deterministic failures that another attempt cannot change.
bool worth_retrying(Errc code) {
  return code != Errc::usage && code != Errc::exists && code != Errc::not_found && code != Errc::permission;
}

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

// `failed_attempt` hears of every attempt that failed, retried or not.
FileOutcome move_one(ClientSession& session, const BatchFile& f, const BatchOptions& options, const ClientOptions& client,
                     ByteCounter* counter, const std::function<void(const Error&)>& failed_attempt) {
  FileOutcome outcome{f, FileStatus::failed, {}, std::nullopt, 0};
  outcome.streams = client.streams;
  auto backoff = options.first_backoff;
  for (unsigned attempt = 0;; ++attempt) {
    outcome.attempts = attempt + 1;
    if (counter) counter->new_attempt();
    try {
      if (options.skip_existing && same_file_exists(session, f, client)) {
        outcome.status = FileStatus::skipped;
        return outcome;
      }
      if (f.direction == Direction::put) {
        outcome.summary = session.put(f.local, f.remote, client, counter);
        if (options.preserve) preserve_remote_attributes(session, f, client);
      } else {
        outcome.summary = session.get(f.remote, f.local, client, counter);
        if (options.preserve) preserve_attributes(f, client);
      }
      outcome.status = FileStatus::done;
      outcome.error.reset();
      return outcome;
    } catch (const Error& e) {
      outcome.error = e;
    } catch (const std::exception& e) {
      outcome.error = Error(Errc::internal, source_of(f) + ": " + e.what());
    }
    if (failed_attempt) failed_attempt(*outcome.error);
    if (attempt >= options.retries || !worth_retrying(outcome.error->code())) return outcome;
    std::this_thread::sleep_for(backoff);
    backoff *= 2;
  }
}

void create_local_directories(const BatchPlan& plan, BatchReport& report) { make_local_tree(plan, report.setup_errors); }

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

class CallbackListener final : public BatchListener {
 public:
  explicit CallbackListener(const FileCallback& on_file) : on_file_(on_file) {}
  void on_file(const FileOutcome& outcome, std::size_t finished, std::size_t planned) override {
    if (on_file_) on_file_(outcome, finished, planned);
  }

 private:
  const FileCallback& on_file_;
};

}  // namespace

BatchReport run_batch(const BatchPlan& plan, const BatchOptions& options, const FileCallback& on_file) {
  CallbackListener listener(on_file);
  return run_batch(plan, options, listener);
}

// Workers take the next file while fewer than `target` files are in flight; --auto moves the
// target between decisions (idle workers wait, and start again when it rises), and the calling
// thread samples the run's progress and makes those decisions.
BatchReport run_batch(const BatchPlan& plan, const BatchOptions& options, BatchListener& listener) {
  const auto start = Clock::now();
  BatchReport report;
  report.planned = plan.files.size();
  create_local_directories(plan, report);
  create_remote_directories(plan, options.client, report);
  for (const auto& e : report.setup_errors)
    if (!report.first_failure) report.first_failure = e.code();

  std::optional<AutoController> controller;
  if (options.auto_tune) {
    AutoLimits limits{options.min_concurrency, options.concurrency, options.client.streams, options.max_streams};
    controller.emplace(limits, start, AutoSettings{options.auto_tolerance, 0.5});
    // The server's own limits, unless the caller already knows them: the first file's server
    // (an unreachable one fails each file on its own, with a clear message, below).
    ServerLimits server = options.server_limits;
    if (!server.max_concurrency && !server.max_streams && !plan.files.empty()) {
      try {
        server = server_limits(plan.files.front().remote, options.client.connect_timeout);
      } catch (const Error&) {
      }
    }
    controller->apply_server_limits(server);
  }
  const BatchShape shape = fit_streams(options.concurrency, options.client.streams, options.max_streams);
  const bool monitor = controller || options.interval.count() > 0;
  ClientOptions base = options.client;
  base.small_files_on_control = true;
  base.local_root = plan.local_root;
  // Files in flight already keep the cores busy: each worker's session gets its share of them
  // rather than a thread per stream, which with many small files mostly costs context switches
  // (2000 x 64 KiB put -r, -c 4 -p 4, 2 cores, loopback: 105 -> 120 MB/s, three rounds each).
  if (base.threads == 0) {
    const unsigned pool = options.auto_tune ? options.concurrency : shape.concurrency;
    const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
    base.threads = std::clamp(cores / std::max(1u, pool), 1u, std::max<unsigned>(1, base.streams));
  }
  // No per-file rate lines in a batch; when the run is sampled, each file reports its bytes
  // (to the counter, never printed) often enough for the aggregate rate.
  base.perf_interval = monitor ? std::chrono::milliseconds(100) : std::chrono::milliseconds(0);

  std::mutex mutex;  // guards everything below, the report, and serializes the listener
  std::condition_variable changed;
  unsigned target = controller ? controller->concurrency() : shape.concurrency;
  std::uint16_t streams = controller ? controller->streams() : shape.streams;
  unsigned active = 0;
  std::size_t next = 0;
  unsigned interval_done = 0, interval_failed = 0;  // since the last decision
  std::atomic<std::uint64_t> moved{0};
  RatePacer pacer(options.connect_rate);  // --connect-rate: connections per second

  auto worker = [&](unsigned index) {
    if (!controller) std::this_thread::sleep_until(start + ramp_start(index, shape.concurrency, options.ramp_up));
    // Each worker keeps its control connection from file to file: small files then cost an OPEN
    // and their data connection, not a TLS handshake and a login each.
    ClientSession session(base);
    for (;;) {
      std::unique_lock lock(mutex);
      changed.wait(lock, [&] { return next >= plan.files.size() || active < target; });
      if (next >= plan.files.size()) return;
      const std::size_t i = next++;
      ++active;
      ClientOptions client = base;
      client.streams = streams;
      lock.unlock();

      std::this_thread::sleep_until(pacer.reserve(Clock::now(), client.streams + 1u));
      const double started_s = std::chrono::duration<double>(Clock::now() - start).count();
      {
        std::lock_guard started(mutex);
        listener.on_file_start(plan.files[i], i + 1, plan.files.size(), client.streams, started_s);
      }
      std::optional<ByteCounter> counter;
      if (monitor) counter.emplace(moved);
      FileOutcome outcome = move_one(session, plan.files[i], options, client, counter ? &*counter : nullptr, [&](const Error& e) {
        // Only failures that say something about the link or the server count against it: a
        // missing source or an existing destination does not.
        if (!worth_retrying(e.code())) return;
        std::lock_guard failed(mutex);
        ++interval_failed;
      });
      outcome.started_s = started_s;
      outcome.finished_s = std::chrono::duration<double>(Clock::now() - start).count();

      lock.lock();
      --active;
      if (outcome.status == FileStatus::done) {
        report.bytes += outcome.summary.bytes;
        ++interval_done;
      }
      if (outcome.status == FileStatus::skipped) ++report.skipped;
      if (outcome.status == FileStatus::failed) {
        ++report.failed;
        if (!report.first_failure) report.first_failure = outcome.error->code();
      }
      report.files.push_back(std::move(outcome));
      listener.on_file(report.files.back(), report.files.size(), plan.files.size());
      changed.notify_all();
    }
  };

  std::vector<std::thread> workers;
  const unsigned pool = controller ? controller->max_concurrency() : shape.concurrency;
  const unsigned count = std::min<std::size_t>(pool, std::max<std::size_t>(1, plan.files.size()));
  for (unsigned i = monitor ? 0 : 1; i < count; ++i) workers.emplace_back(worker, i);
  if (!monitor) {
    worker(0);
  } else {
    using namespace std::chrono;
    constexpr auto never = Clock::time_point::max();
    auto next_interval = options.interval.count() > 0 ? start + options.interval : never;
    auto next_decision = controller ? start + options.auto_interval : never;
    RateMeter meter(start);
    std::unique_lock lock(mutex);
    auto all_finished = [&] { return report.files.size() >= plan.files.size(); };
    while (!all_finished()) {
      changed.wait_until(lock, std::min(next_interval, next_decision), all_finished);
      if (all_finished()) break;
      const auto now = Clock::now();
      if (now >= next_interval) {
        BatchInterval sample{meter.sample(now, moved.load()), active, target, report.files.size(), plan.files.size()};
        listener.on_interval(sample);
        while (next_interval <= now) next_interval += options.interval;
      }
      if (controller && now >= next_decision) {
        AutoDecision d = controller->decide(now, moved.load(), interval_done, interval_failed);
        interval_done = interval_failed = 0;
        target = controller->concurrency();
        streams = controller->streams();
        listener.on_decision(d);
        changed.notify_all();
        while (next_decision <= now) next_decision += options.auto_interval;
      }
    }
  }
  for (auto& w : workers) w.join();
  report.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return report;
}

std::string format_outcome(const FileOutcome& outcome) {
  const std::string path = source_of(outcome.file);
  if (outcome.status == FileStatus::skipped) return "skipped " + path + " (exists, same size and checksum)";
  if (outcome.status == FileStatus::failed) {
    std::string line = "FAILED " + path + ": " + (outcome.error ? outcome.error->what() : "?");
    if (outcome.attempts > 1) line += " (after " + std::to_string(outcome.attempts) + " attempts)";
    return line;
  }
  const auto& s = outcome.summary;
  const double rate = s.seconds > 0 ? to_megabytes_per_s(static_cast<double>(s.bytes) / s.seconds) : 0;
  char numbers[128];
  std::snprintf(numbers, sizeof numbers, " %llu bytes %.3f s %.1f MB/s ", static_cast<unsigned long long>(s.bytes),
                s.seconds, rate);
  char started[48];
  std::snprintf(started, sizeof started, " (started +%.2f s)", outcome.started_s);
  return "done " + path + numbers + format_checksum(s.checksum, s.checksum_value) + started;
}

std::string format_batch_report(const BatchReport& report) {
  std::size_t done = 0, skipped = 0;
  for (const auto& f : report.files) {
    done += f.status == FileStatus::done;
    skipped += f.status == FileStatus::skipped;
  }
  const double avg = report.seconds > 0 ? static_cast<double>(report.bytes) / report.seconds : 0;
  std::string text = format_rate_line(RateSample{report.bytes, report.seconds, avg, avg}) + "\n";
  char line[160];
  std::snprintf(line, sizeof line, "%zu files: %zu done, %zu skipped, %zu failed; %llu bytes in %.2f s, %.1f MB/s\n",
                report.files.size(), done, skipped, report.failed, static_cast<unsigned long long>(report.bytes),
                report.seconds, to_megabytes_per_s(avg));
  text += line;
  for (const auto& e : report.setup_errors) text += std::string("failed: ") + e.what() + "\n";
  for (const auto& f : report.files)
    if (f.status == FileStatus::failed) text += "failed: " + source_of(f.file) + ": " + f.error->what() + "\n";
  return text;
}

}  // namespace pxfer
