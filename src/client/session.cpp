// ClientSession: the io_context, its threads, the trust and the kept control connection of a
// client. A put or get here is one attempt; the retries are retrying.cpp's.
#include <sys/stat.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_future.hpp>
#include <condition_variable>
#include <mutex>
#include <thread>

#include <spdlog/spdlog.h>

#include "connect.hpp"
#include "job.hpp"
#include "net/frame_io.hpp"
#include "path_names.hpp"
#include "small_files.hpp"
#include "pxfer/client/client.hpp"
#include "pxfer/client/retrying.hpp"
#include "plan/negotiate.hpp"
#include "pxfer/core/limits.hpp"

namespace pxfer {
namespace {

namespace asio = boost::asio;

bool is_directory(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

unsigned threads_for(const ClientOptions& options) {
  if (options.threads > 0) return options.threads;
  return std::max(1u, std::min<unsigned>(std::thread::hardware_concurrency(), options.streams));
}

}  // namespace

// The io_context and its threads live as long as the session; so does the control connection,
// which only the job running at the time touches (one job at a time, each on `strand`).
struct ClientSession::State {
  State(unsigned threads, std::shared_ptr<ClientTrust> own_trust) : trust(std::move(own_trust)) {
    for (unsigned i = 0; i < threads; ++i)
      workers.emplace_back([this] {
        ioc.run();
        std::lock_guard lock(returned_mutex);
        ++returned;
        returned_cv.notify_all();
      });
  }
  ~State() {
    drop_link();   // closes the control connection: the server ends the session
    work.reset();  // the threads return once the last transfer's streams have wound down
    wind_down();
    for (auto& w : workers) w.join();
  }

  // Every stream and watcher ends within a second of its transfer (closed connections, timers
  // cancelled). One that does not must not hold its caller for ever: a third-party copy's thread
  // in pxferd waits here before it reports the copy's end, and once (CI, stop 48) it never did.
  void wind_down() {
    std::unique_lock lock(returned_mutex);
    if (returned_cv.wait_for(lock, limits::client_wind_down, [this] { return returned == workers.size(); })) return;
    spdlog::warn("pxfer: work of a transfer that ended was still pending {} s later; stopping it (please report this "
                 "with the -v log)", limits::client_wind_down.count() / 1000);
    ioc.stop();  // the pending coroutines are destroyed with the io_context, unresumed
  }

  // `link` changes only on the strand, where an abort() may look at it too.
  void drop_link() {
    asio::co_spawn(strand, [this]() -> net::awaitable<void> {
      link.reset();
      co_return;
    }, asio::use_future).get();
  }

  // One attempt of `job`. The control connection is kept for the next job only when the server's
  // side of it is known to be ready for another OPEN.
  net::awaitable<void> attempt_on_strand(Job& job) {
    bool link_clean = false;
    std::exception_ptr failed;
    try {
      co_await run_job(ioc, job, link, link_clean, trust);
    } catch (...) {
      failed = std::current_exception();
    }
    if (!link_clean) link.reset();
    if (failed) std::rethrow_exception(failed);
  }
  void run_attempt(Job& job) { asio::co_spawn(strand, attempt_on_strand(job), asio::use_future).get(); }

  // One attempt of the job; an attempt after a failed one resumes from what the receiver kept.
  TransferSummary run(Job job) {
    transfer::check_options(job.options);
    check_congestion_control(job.options.congestion);
    run_attempt(job);
    return job.summary;
  }

  // A request and its answer; the connection stays kept (the server answers every request in
  // full), unless the exchange itself failed.
  wire::Message request(const Url& remote, std::chrono::milliseconds connect_timeout, const wire::Message& message) {
    wire::Message reply;
    try {
      asio::co_spawn(strand, run_request(link, remote, connect_timeout, message, reply, trust), asio::use_future).get();
    } catch (...) {
      link.reset();
      throw;
    }
    return reply;
  }

  asio::io_context ioc;
  asio::executor_work_guard<asio::io_context::executor_type> work{ioc.get_executor()};
  asio::strand<asio::io_context::executor_type> strand{asio::make_strand(ioc)};
  std::shared_ptr<ClientTrust> trust;
  std::optional<ControlLink> link;
  std::vector<std::thread> workers;
  std::mutex returned_mutex;
  std::condition_variable returned_cv;
  std::size_t returned = 0;  // threads whose ioc.run() returned
};

ClientSession::ClientSession(const ClientOptions& options)
    : state_(std::make_unique<State>(threads_for(options), current_trust())) {}
ClientSession::ClientSession(const ClientOptions& options, ClientSecurity security)
    : state_(std::make_unique<State>(threads_for(options), std::make_shared<ClientTrust>(std::move(security)))) {}
ClientSession::~ClientSession() = default;

bool ClientSession::verified(const Url& remote) const {
  return state_->trust && !state_->trust->verified_fingerprint(remote.authority()).empty();
}

void ClientSession::abort() {
  asio::post(state_->strand, [s = state_.get()] {
    if (s->link && s->link->connection) s->link->connection->close();
  });
}

TransferSummary ClientSession::put(const std::string& local, const Url& remote, const ClientOptions& options,
                                   ProgressListener* listener, unsigned attempt) {
  Url target = remote;
  if (target.trailing_slash) target.path += basename_of(local);
  Job job{Direction::put, local, target, options, listener, {}};
  job.summary.direction = Direction::put;
  job.summary.attempts = attempt;
  job.summary.source = local;
  job.summary.destination = target.to_string();
  return state_->run(std::move(job));
}

TransferSummary ClientSession::get(const Url& remote, const std::string& local, const ClientOptions& options,
                                   ProgressListener* listener, unsigned attempt) {
  if (remote.trailing_slash)
    throw Error(Errc::usage, remote.to_string() + ": names a directory; name a file, or copy the directory with get -r");
  std::string target = local;
  if (target.ends_with('/') || is_directory(target)) {
    if (!target.ends_with('/')) target += '/';
    target += basename_of(remote.path);
  }
  Job job{Direction::get, target, remote, options, listener, {}};
  job.summary.direction = Direction::get;
  job.summary.attempts = attempt;
  job.summary.source = remote.to_string();
  job.summary.destination = target;
  return state_->run(std::move(job));
}

void ClientSession::move_small(const std::vector<SmallFile>& files, const ClientOptions& options, const SmallDone& done) {
  State& s = *state_;
  asio::co_spawn(s.strand, run_small_files(s.link, files, options, s.trust, done), asio::use_future).get();
}

RemoteSum ClientSession::remote_sum(const Url& remote, ChecksumAlgo algo, std::uint64_t size,
                                    std::chrono::milliseconds connect_timeout) {
  wire::Message ask_sum = wire::Sum{remote.path, static_cast<std::uint8_t>(algo), size};
  auto sum = net::expect<wire::SumOk>(state_->request(remote, connect_timeout, ask_sum), remote.to_string());
  return RemoteSum{sum.size, sum.value};
}

void ClientSession::set_remote_attributes(const Url& remote, std::uint32_t mode, std::int64_t mtime_ns,
                                          std::chrono::milliseconds connect_timeout) {
  wire::Message set = wire::SetAttributes{remote.path, mode, mtime_ns};
  net::expect<wire::Done>(state_->request(remote, connect_timeout, set), remote.to_string());
}

TransferSummary put_file(const std::string& local, const Url& remote, const ClientOptions& options,
                         ProgressListener* listener) {
  ClientSession session(options);
  return put_retrying(session, local, remote, options, listener);
}

TransferSummary get_file(const Url& remote, const std::string& local, const ClientOptions& options,
                         ProgressListener* listener) {
  ClientSession session(options);
  return get_retrying(session, remote, local, options, listener);
}

}  // namespace pxfer
