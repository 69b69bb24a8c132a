#include "tpc_service.hpp"

#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/stat.h>

#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <algorithm>
#include <limits>
#include <mutex>
#include <thread>

#include <spdlog/spdlog.h>

#include "net/frame_io.hpp"
#include "net/tls.hpp"
#include "pxfer/engine/peer_copy.hpp"
#include "pxfer/engine/progress_listener.hpp"
#include "pxfer/common/log_safe.hpp"
#include "accounting.hpp"
#include "pxfer/core/stream_count.hpp"
#include "transfer_service.hpp"

namespace pxfer::server {
namespace {

namespace asio = boost::asio;
using net::awaitable;

// The copy runs on a thread of its own (the client's session blocks its caller and has its own
// io_context): these are what the thread and the session's coroutine share.
struct CopyRun : ProgressListener {
  std::atomic<std::uint64_t> bytes{0};
  std::atomic<bool> finished{false};
  std::optional<Error> failure;  // written before `finished`, read after it
  TransferSummary summary;
  void on_interval(const IntervalReport& r) override {
    bytes = r.total.bytes;
    std::lock_guard lock(mutex);
    streams.clear();
    for (const auto& s : r.streams) streams.push_back(s.figures);
  }
  std::vector<wire::StreamFigures> latest_streams() {
    std::lock_guard lock(mutex);
    return streams;
  }
  void on_finish(const IntervalReport& r, const TransferSummary&) override { bytes = r.total.bytes; }

  // The steering client went away: the copy stops (the receiver keeps its partial file for a
  // retry). The session is registered while its transfer runs, so the two threads meet here.
  void abort() {
    std::lock_guard lock(mutex);
    aborted = true;
    if (session) session->abort();
  }
  void attach(PeerCopy* s) {
    std::lock_guard lock(mutex);
    session = s;
    if (session && aborted) session->abort();
  }
  std::mutex mutex;
  std::vector<wire::StreamFigures> streams;  // the sending side's, with open_want_stats
  PeerCopy* session = nullptr;
  bool aborted = false;
};

std::string real_path(const std::string& path) {
  char* resolved = ::realpath(path.c_str(), nullptr);
  if (!resolved) throw Error(errc_from_errno(errno), path + ": " + errno_text(errno));
  std::string out(resolved);
  ::free(resolved);
  return out;
}

// A push reads `path` as the server's own gets do: opened beneath the export root's descriptor
// (no way out of it, no symlink swapped in later), a regular file only. The client session then
// opens /proc/self/fd/N, which can only ever be that file.
struct PushSource {
  int fd = -1;
  std::uint64_t size = 0;
  std::string name() const { return "/proc/self/fd/" + std::to_string(fd); }
};
PushSource open_push_source(const Directory& root, const std::string& path) {
  PushSource s;
  s.fd = root.open_file(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  struct stat st {};
  if (::fstat(s.fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(s.fd);
    throw Error(Errc::not_found, path + ": not a regular file on this server");
  }
  s.size = static_cast<std::uint64_t>(st.st_size);
  return s;
}

ClientOptions copy_options(const wire::TpcStart& m) {
  ClientOptions o;
  o.streams = fixed_streams(m.streams);
  if (m.has_auto && m.auto_streams) {  // -p auto: TPC_START's streams are its ceiling
    o.auto_streams = true;
    o.max_streams = o.streams;
  }
  o.block_size = m.block_size;
  o.checksum = static_cast<ChecksumAlgo>(m.checksum);
  o.overwrite = (m.flags & wire::open_overwrite) != 0;
  o.resume = (m.flags & wire::open_no_resume) == 0;
  o.sync = (m.flags & wire::open_sync) != 0;
  o.encrypt = (m.flags & wire::open_encrypt) != 0;
  o.stream_stats = (m.flags & wire::open_want_stats) != 0;  // figures for TPC_PROGRESS
  o.perf_interval = std::chrono::milliseconds(std::clamp<std::uint32_t>(m.interval_ms, 100, 60'000));
  if (m.stall_timeout_ms != 0) o.stall_timeout = std::chrono::milliseconds(m.stall_timeout_ms);
  return o;
}

// `end_counts`: the client confirmed cap_tpc_end_counts.
wire::TpcDone done_of(const TransferSummary& s, bool end_counts) {
  wire::TpcDone d;
  d.bytes = s.bytes;
  d.resumed_bytes = s.resumed_bytes;
  d.elapsed_ms = static_cast<std::uint32_t>(s.seconds * 1000);
  d.streams = s.streams;
  d.block_size = s.block_size;
  d.checksum = static_cast<std::uint8_t>(s.checksum);
  d.value = s.checksum_value;
  d.stream_recoveries = s.stream_recoveries;
  if (!s.stream_choice.empty()) {  // only a copy under auto has one, and only a TPC_START with auto asks for it
    d.has_choice = true;
    d.stream_choice = s.stream_choice.substr(0, wire::max_stream_choice);
  }
  if (end_counts) {
    d.has_choice = true;  // the first tail carries the second, with an empty choice under a fixed count
    d.has_end_counts = true;
    d.block_copies = static_cast<std::uint32_t>(std::min<std::uint64_t>(s.block_copies, std::numeric_limits<std::uint32_t>::max()));
    d.streams_let_go = static_cast<std::uint32_t>(std::min<std::uint64_t>(s.streams_let_go, std::numeric_limits<std::uint32_t>::max()));
  }
  return d;
}

// The steering client closed its end (it was cancelled, gfal2_cancel, or it died): during a
// copy it sends nothing, so a hang-up seen by poll (even behind a TLS close_notify) means it left.
bool client_left(net::Connection& control) {
  pollfd p{control.socket().native_handle(), POLLRDHUP, 0};
  return ::poll(&p, 1, 0) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0;
}

// TPC_PROGRESS each interval while the copy thread runs (checked every 20 ms, so that TPC_DONE
// follows the copy's end closely, and a client that left stops the copy within 20 ms rather than
// at the next report), then TPC_DONE or the copy's error.
awaitable<void> report_until_done(net::Connection& control, CopyRun& run, std::uint32_t interval_ms, std::uint64_t total,
                                  bool end_counts) {
  asio::steady_timer timer(co_await asio::this_coro::executor);
  const auto interval = std::chrono::milliseconds(std::clamp<std::uint32_t>(interval_ms, 100, 60'000));
  auto next_report = Clock::now() + interval;
  while (!run.finished) {
    timer.expires_after(std::chrono::milliseconds(20));
    co_await timer.async_wait(asio::use_awaitable);
    if (!run.finished && client_left(control)) {
      spdlog::info("client={} left its third-party copy (cancelled): copy aborted", control.peer());
      run.abort();
      throw Error(Errc::interrupted, "the client left its third-party copy");
    }
    if (run.finished || Clock::now() < next_report) continue;
    next_report += interval;
    wire::Message progress = wire::TpcProgress{run.bytes.load(), total, run.latest_streams()};
    try {
      co_await net::send_message(control, progress);
    } catch (...) {
      spdlog::info("client={} went away during its third-party copy: copy aborted", control.peer());
      run.abort();  // nobody is left to report to or to retry: the copy ends here
      throw;
    }
  }
  wire::Message last = run.failure ? wire::Message(wire::ErrorMsg{static_cast<std::uint16_t>(run.failure->code()),
                                                                  run.failure->what()})
                                   : wire::Message(done_of(run.summary, end_counts));
  co_await net::send_message(control, last);
}

// The copy on a thread of its own: a ClientSession blocks its caller. `source_fd` (a push's file,
// or -1) is closed when the copy ends.
// What the steering client hears when the copy failed before the peer proved to be the pxfer
// server its fingerprint names: a fixed text, never what the other end said or how the connection
// failed, so a third-party copy cannot serve as a port scanner (issue 34).
Error unproven_peer(const Url& target) {
  return Error(Errc::network, "the peer at " + target.authority() +
                                  " is not a pxfer server with the fingerprint given, or refused the connection (third-party copy)");
}

void launch(std::shared_ptr<CopyRun> run, const PeerCopier& copier, PeerCopyRequest request, int source_fd) {
  std::thread([run, copier, request = std::move(request), source_fd] {
    try {
      if (!copier) throw Error(Errc::internal, "this pxfer server was built without the third-party copy client (Server has no PeerCopier)");
      const std::unique_ptr<PeerCopy> copy = copier(request);
      run->attach(copy.get());
      try {
        run->summary = copy->run(*run);
      } catch (const Error& e) {
        run->attach(nullptr);
        // Only what the connection could have told: a local refusal (the file exists) stays as it is.
        const Errc c = e.code();
        if (!copy->verified() && (c == Errc::network || c == Errc::protocol || c == Errc::permission))
          throw unproven_peer(request.target);
        throw;
      } catch (...) {
        run->attach(nullptr);
        throw;
      }
      run->attach(nullptr);
    } catch (const Error& e) {
      run->failure = e;
    } catch (const std::exception& e) {
      run->failure = Error(Errc::internal, std::string("third-party copy: ") + e.what());
    }
    if (source_fd >= 0) ::close(source_fd);
    run->finished = true;
  }).detach();
}

}  // namespace

struct TpcService::Copies {
  std::mutex mutex;
  std::vector<std::weak_ptr<CopyRun>> runs;
  void add(const std::shared_ptr<CopyRun>& run) {
    std::lock_guard lock(mutex);
    std::erase_if(runs, [](const auto& w) { return w.expired(); });
    runs.push_back(run);
  }
  std::vector<std::shared_ptr<CopyRun>> alive() {
    std::lock_guard lock(mutex);
    std::vector<std::shared_ptr<CopyRun>> out;
    for (const auto& w : runs)
      if (auto r = w.lock()) out.push_back(std::move(r));
    return out;
  }
};

TpcService::~TpcService() {
  auto running = copies_->alive();
  for (auto& r : running) r->abort();
  const auto deadline = Clock::now() + std::chrono::seconds(10);
  for (auto& r : running)
    while (!r->finished && Clock::now() < deadline) std::this_thread::sleep_for(std::chrono::milliseconds(10));
}

TpcService::TpcService(const ServerOptions& options, const Directory& root, std::shared_ptr<Admission> admission,
                       PeerCopier copier)
    : copies_(std::make_shared<Copies>()),
      options_(options),
      admission_(std::move(admission)),
      root_(root),
      grants_(options.tpc_grant_lifetime),
      peers_(options.tpc_allow),
      copier_(std::move(copier)) {}

awaitable<void> TpcService::grant(net::Connection& control, const SessionRights& rights, const wire::TpcGrantRequest& m) {
  std::optional<Error> failed;
  wire::Message answer;
  try {
    auto path = normalize_request_path(m.path);
    if (!path || path->empty()) throw Error(Errc::usage, m.path + ": a third-party copy needs a file below the export root");
    TpcScope scope{*path, static_cast<std::uint8_t>(m.direction), m.size, (m.flags & wire::open_overwrite) != 0,
                   rights.identity};
    answer = wire::TpcGrant{grants_.issue(scope, Clock::now()),
                            static_cast<std::uint32_t>(grants_.lifetime().count())};
    spdlog::info("client={} identity={} path={} third-party copy grant issued ({})", control.peer(), rights.identity,
                 *path, m.direction == wire::Direction::put ? "the peer writes" : "the peer reads");
  } catch (const Error& e) {
    failed = e;
  }
  if (failed) answer = wire::ErrorMsg{static_cast<std::uint16_t>(failed->code()), failed->what()};
  co_await net::send_message(control, answer);
}

namespace {
// An address as one family sees it: a dual-stack listener reports IPv4 clients as ::ffff:a.b.c.d.
net::tcp::endpoint plain(net::tcp::endpoint e) {
  if (e.address().is_v6() && e.address().to_v6().is_v4_mapped())
    e.address(asio::ip::make_address_v4(asio::ip::v4_mapped, e.address().to_v6()));
  return e;
}
}  // namespace

awaitable<Url> TpcService::allowed_peer(const Url& peer, const net::tcp::endpoint& self) {
  // Without --tpc-allow only this server's own port can be meant: nothing else is even looked up.
  if (peers_.empty() && peer.port != self.port())
    throw Error(Errc::permission, "this server makes no third-party copies: its operator allows no peer "
                                  "(pxferd --tpc-allow HOST or ADDRESS/PREFIX)");
  net::tcp::resolver resolver(co_await asio::this_coro::executor);
  auto [ec, results] = co_await resolver.async_resolve(peer.host, std::to_string(peer.port), net::use_tuple);
  if (ec) throw Error(Errc::network, "cannot resolve the third-party copy peer " + peer.authority() + ": " + ec.message());
  bool resolved_elsewhere = false;
  for (const auto& entry : results) {
    const std::string address = entry.endpoint().address().to_string();
    // A copy within one server: the peer is the address and port this server was reached on.
    const bool itself = plain(entry.endpoint()) == plain(self);
    if (!itself && !peers_.allows(peer.host, address, peer.port)) {
      resolved_elsewhere = true;
      continue;
    }
    Url pinned = peer;
    pinned.host = address;
    co_return pinned;
  }
  if (peers_.empty() && resolved_elsewhere)
    throw Error(Errc::permission, "this server makes no third-party copies: its operator allows no peer "
                                  "(pxferd --tpc-allow HOST or ADDRESS/PREFIX)");
  throw Error(Errc::permission, "this server does not connect to " + peer.authority() +
                                    " for third-party copies: the peer is not in its --tpc-allow");
}

awaitable<std::unique_ptr<Admission::Slot>> TpcService::admit(net::Connection& control, const std::string& path,
                                                             std::uint16_t& streams, std::uint64_t total) {
  const auto queued_at = Clock::now();
  Admission::OnWait on_wait = [&control, path, total](QueueState s) -> awaitable<void> {
    spdlog::info("client={} path={} third-party copy queued position={} active={} queued={}", control.peer(), log_safe(path),
                 s.position, s.active, s.queued);
    wire::Message waiting = wire::TpcProgress{0, total, {}};  // the steering client's silence watch hears it
    co_await net::send_message(control, waiting);
  };
  AdmissionPolicy::Request request{client_address(control), streams, true};
  auto slot = co_await admission_->admit(request, options_.queue_timeout, on_wait);
  const unsigned asked = streams;
  streams = static_cast<std::uint16_t>(slot->streams());
  spdlog::info("client={} path={} third-party copy admitted active={} max_active={} waited={:.2f}s streams={} asked={}",
               control.peer(), log_safe(path), admission_->active(), admission_->max_active(),
               std::chrono::duration<double>(Clock::now() - queued_at).count(), streams, asked);
  co_return slot;
}

namespace {
// The accounting line of a copy this server made (transfer_service.cpp's for a put or a get): a
// pull wrote here ("put"), a push read here ("get").
void account(net::Connection& control, const SessionRights& rights, const std::string& agent, const wire::TpcStart& m,
             const std::string& path, unsigned streams, const CopyRun* run, double seconds, const std::optional<Error>& failure,
             const char* failed_as) {
  TransferAccount a = account_of(control, path, m.mode == wire::CopyMode::pull, streams, m.checksum,
                                 TransferService::Who{rights.identity, agent}, "-");
  a.seconds = seconds;
  if (run) {
    a.bytes = failure ? run->bytes.load() : run->summary.bytes;
    a.resumed = failure ? 0 : run->summary.resumed_bytes;
    a.rate_mbps = seconds > 0 ? static_cast<double>(run->bytes.load()) / seconds / 1e6 : 0;
    if (!failure) a.checksum = run->summary.checksum_value;
  }
  if (failure) set_error(a, failed_as, *failure);
  else a.result = "ok";
  if (failure) spdlog::warn("{}", logfmt_line(a));
  else spdlog::info("{}", logfmt_line(a));
}
}  // namespace

awaitable<void> TpcService::start(net::Connection& control, const SessionRights& rights, const std::string& agent,
                                  const wire::TpcStart& m, std::uint64_t caps) {
  auto run = std::make_shared<CopyRun>();
  std::optional<Error> refused;
  std::uint64_t total = 0;
  int source_fd = -1;  // a push's file, open until its copy ends
  std::unique_ptr<Admission::Slot> slot;  // held until the copy ends
  std::string local_path = m.local_path;
  std::uint16_t streams = m.streams;
  try {
    std::string why;
    auto peer = parse_url(m.peer_url, &why);
    if (!peer) throw Error(Errc::usage, "third-party copy peer " + m.peer_url + ": " + why);
    if (net::normalize_fingerprint(m.peer_fingerprint).empty())
      throw Error(Errc::usage, "third-party copy: the peer's certificate fingerprint is missing or malformed");
    auto path = normalize_request_path(m.local_path);
    if (!path || path->empty()) throw Error(Errc::usage, m.local_path + ": a third-party copy needs a file below the export root");
    const Url target = co_await allowed_peer(*peer, control.socket().local_endpoint());
    ClientSecurity security;
    security.fingerprint = m.peer_fingerprint;  // what the steering client verified: nothing else
    security.token = m.grant;
    security.known_hosts_file = "/dev/null";  // never consulted with a fingerprint; never written
    local_path = *path;
    ClientOptions options = copy_options(m);
    std::string local;
    if (m.mode == wire::CopyMode::push) {
      const PushSource source = open_push_source(root_, *path);
      source_fd = source.fd;
      local = source.name();
      total = source.size;
    } else {
      options.local_root = real_path(options_.root);
      local = options.local_root + "/" + *path;
    }
    spdlog::info("client={} identity={} third-party copy {} {} {} {}", control.peer(), rights.identity,
                 m.mode == wire::CopyMode::push ? "push" : "pull", *path, m.mode == wire::CopyMode::push ? "to" : "from",
                 log_safe(target.to_string()));
    const bool push = m.mode == wire::CopyMode::push;
    slot = co_await admit(control, *path, streams, total);
    options.streams = streams;
    if (options.auto_streams) options.max_streams = streams;  // the grant caps auto's ceiling
    copies_->add(run);
    launch(run, copier_, PeerCopyRequest{options, security, target, local, push}, source_fd);
  } catch (const Error& e) {
    refused = e;
  }
  if (refused) {
    spdlog::info("client={} identity={} third-party copy refused: {}", control.peer(), rights.identity, refused->what());
    if (source_fd >= 0 && !slot) ::close(source_fd);  // never handed to a copy
    account(control, rights, agent, m, local_path, streams, nullptr, 0, refused, "refused");
    wire::Message answer = wire::ErrorMsg{static_cast<std::uint16_t>(refused->code()), refused->what()};
    co_await net::send_message(control, answer);
    co_return;
  }
  const auto started = Clock::now();
  std::exception_ptr lost;  // the steering client went away (the copy was aborted)
  try {
    co_await report_until_done(control, *run, m.interval_ms, total, (caps & wire::cap_tpc_end_counts) != 0);
  } catch (...) {
    lost = std::current_exception();
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - started).count();
  std::optional<Error> failure = run->finished ? run->failure : std::nullopt;
  if (lost && !failure) failure = Error(Errc::network, "the steering client went away: copy aborted");
  account(control, rights, agent, m, local_path, streams, run.get(), seconds, failure, "failed");
  if (lost) std::rethrow_exception(lost);
}

}  // namespace pxfer::server
