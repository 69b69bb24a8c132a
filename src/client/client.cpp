#include "pxfer/client.hpp"

#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <fstream>
#include <mutex>
#include <random>
#include <thread>

#include <spdlog/spdlog.h>

#include "net/frame_io.hpp"
#include "net/race.hpp"
#include "pxfer/error.hpp"
#include "pxfer/file_io.hpp"
#include "control_link.hpp"
#include "known_hosts.hpp"
#include "net/tls.hpp"
#include "transfer/transfer.hpp"
#include "pxfer/version.hpp"
#include <cstdlib>
#include <map>

namespace pxfer {
namespace {

namespace asio = boost::asio;
using asio::ip::tcp;
using net::awaitable;
using namespace asio::experimental::awaitable_operators;
constexpr auto use_tuple = asio::as_tuple(asio::use_awaitable);

std::string basename_of(const std::string& path) {
  std::string p = path;
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  auto slash = p.rfind('/');
  return slash == std::string::npos ? p : p.substr(slash + 1);
}

bool is_directory(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

std::string connect_error_text(const std::string& authority, const boost::system::error_code& ec) {
  std::string text = "cannot connect to " + authority + ": ";
  if (ec == asio::error::connection_refused) return text + "connection refused (is pxferd running?)";
  if (ec == asio::error::timed_out || ec == asio::error::operation_aborted)
    return text + "timed out (is a firewall dropping the connection?)";
  return text + ec.message();
}

// Opens a socket to the first endpoint that answers. The window is pinned before connect() so
// the SYN offers a window scale that fits it.
awaitable<tcp::socket> connect_socket(asio::any_io_executor ex, const tcp::resolver::results_type& endpoints,
                                      const SocketTuning& tuning, std::chrono::milliseconds timeout,
                                      const std::string& authority, BufferGrant* grant) {
  boost::system::error_code last = asio::error::host_not_found;
  for (const auto& entry : endpoints) {
    tcp::socket socket(ex);
    socket.open(entry.endpoint().protocol());
    BufferGrant g = tune_socket(socket.native_handle(), tuning);
    asio::steady_timer timer(ex, timeout);
    auto result = co_await (socket.async_connect(entry.endpoint(), use_tuple) || timer.async_wait(use_tuple));
    if (result.index() == 0) {
      auto [ec] = std::get<0>(result);
      if (!ec) {
        if (grant) *grant = g;
        co_return socket;
      }
      last = ec;
    } else {
      last = asio::error::timed_out;
    }
  }
  throw Error(Errc::network, connect_error_text(authority, last));
}

}  // namespace

namespace {

std::mutex security_mutex;
ClientSecurity security_settings;
net::TlsContextPtr client_tls;                              // built on first use
std::map<std::string, std::string> verified_fingerprints;  // authority -> what the control link verified

net::TlsContextPtr tls_context() {
  std::lock_guard lock(security_mutex);
  if (!client_tls)
    client_tls = net::make_client_tls(
        net::ClientTlsConfig{security_settings.ca_file, security_settings.cert_file, security_settings.key_file});
  return client_tls;
}

// The server is who we expect: the chain (checked in the handshake with --ca), the explicit
// --fingerprint, or the known-hosts pin (trust on first use). Before any credential is sent.
void verify_server(const net::Connection& conn, const std::string& authority) {
  const ClientSecurity& sec = client_security();
  const net::TlsInfo* tls = conn.tls();
  if (!tls || tls->peer_fingerprint.empty())
    throw Error(Errc::permission, authority + " presented no certificate; refusing to connect");
  if (sec.ca_file.empty()) {
    if (!sec.fingerprint.empty()) {
      if (net::normalize_fingerprint(sec.fingerprint) != tls->peer_fingerprint)
        throw Error(Errc::permission, "the certificate of " + authority + " is " + tls->peer_fingerprint +
                                          ", not the --fingerprint given; refusing to connect");
    } else {
      std::string file = sec.known_hosts_file.empty() ? default_known_hosts_file() : sec.known_hosts_file;
      if (auto warning = trust_on_first_use(file, authority, tls->peer_fingerprint))
        std::fprintf(stderr, "pxfer: warning: %s\n", warning->c_str());
    }
  }
  std::lock_guard lock(security_mutex);
  verified_fingerprints[authority] = tls->peer_fingerprint;
}

}  // namespace

void set_client_security(ClientSecurity security) {
  std::lock_guard lock(security_mutex);
  security_settings = std::move(security);
  client_tls.reset();
}

const ClientSecurity& client_security() { return security_settings; }

std::string default_known_hosts_file() {
  if (const char* x = std::getenv("PXFER_KNOWN_HOSTS"); x && *x) return x;
  if (const char* x = std::getenv("XDG_CONFIG_HOME"); x && *x) return std::string(x) + "/pxfer/known_hosts";
  const char* home = std::getenv("HOME");
  return std::string(home && *home ? home : ".") + "/.config/pxfer/known_hosts";
}

std::string normalize_fingerprint(const std::string& text) { return net::normalize_fingerprint(text); }

std::string describe_protection(const net::Connection& control, bool encrypt) {
  std::string text = "control " + control.protection() + ", data ";
  if (!encrypt) return text + "clear";
  std::string p = control.protection();
  if (!p.empty() && p.back() == ')') p.pop_back();
  return text + p + (net::kernel_tls_available() ? ", OpenSSL user space)" : ", OpenSSL user space: no kernel TLS)");
}

awaitable<std::shared_ptr<net::Connection>> open_data_connection(tcp::socket& socket, const bool& encrypt,
                                                                 const std::string& authority) {
  if (!encrypt) co_return net::make_tcp_connection(std::move(socket));
  std::string expected;
  {
    std::lock_guard lock(security_mutex);
    expected = verified_fingerprints[authority];
  }
  std::string host = socket.remote_endpoint().address().to_string();
  auto conn = net::make_tls_connection(std::move(socket), tls_context());
  co_await net::tls_handshake(*conn, false, host, authority);
  if (conn->tls()->peer_fingerprint != expected)
    throw Error(Errc::permission, "a data stream to " + authority + " met a different certificate (" +
                                      conn->tls()->peer_fingerprint + ") than the control connection; refusing it");
  co_return conn;
}

awaitable<ControlLink> open_control(const Url& remote, std::chrono::milliseconds connect_timeout) {
  auto ex = co_await asio::this_coro::executor;
  tcp::resolver resolver(ex);
  const std::string service = std::to_string(remote.port);
  auto [rec, endpoints] = co_await resolver.async_resolve(remote.host, service, use_tuple);
  if (rec) throw Error(Errc::network, "cannot resolve host " + remote.host + ": " + rec.message());
  ControlLink link;
  link.authority = remote.authority();
  const SocketTuning control_tuning;  // named: g++ 12 mishandles temporaries across co_await
  auto socket = co_await connect_socket(ex, endpoints, control_tuning, connect_timeout, link.authority, nullptr);
  // Data streams go to the address the control connection reached, not to a fresh lookup.
  link.data_endpoints = tcp::resolver::results_type::create(socket.remote_endpoint(), remote.host, service);
  enable_keepalive(socket.native_handle(), 60);
  // TLS 1.3 always; the server's identity is checked before anything is sent.
  link.connection = net::make_tls_connection(std::move(socket), tls_context());
  co_await net::tls_handshake(*link.connection, false, remote.host, link.authority);
  verify_server(*link.connection, link.authority);
  spdlog::debug("control connection to {} ({}), {}", link.authority, link.connection->peer(),
                link.connection->protection());
  wire::Message hello = wire::Hello{wire::protocol_version, wire::protocol_version, wire::our_capabilities, client_agent};
  co_await net::send_message(*link.connection, hello);
  wire::Message auth = wire::Auth{client_security().token};
  co_await net::send_message(*link.connection, auth);
  wire::Message reply = co_await net::read_message(*link.connection);
  link.hello = net::expect<wire::HelloOk>(std::move(reply), link.connection->peer());
  wire::Message auth_reply = co_await net::read_message(*link.connection);
  link.auth = net::expect<wire::AuthOk>(std::move(auth_reply), link.connection->peer());
  spdlog::debug("authenticated to {} ({}) as {}", link.authority, link.hello.agent, link.auth.identity);
  co_return link;
}

void run_io(unsigned threads, const std::function<awaitable<void>(asio::io_context&)>& make) {
  asio::io_context ioc;
  std::exception_ptr failure;
  asio::co_spawn(asio::make_strand(ioc), make(ioc), [&](std::exception_ptr e) { failure = e; });
  std::vector<std::thread> workers;
  for (unsigned i = 1; i < threads; ++i) workers.emplace_back([&ioc] { ioc.run(); });
  ioc.run();
  for (auto& w : workers) w.join();
  if (failure) std::rethrow_exception(failure);
}

namespace {

// Everything one file transfer needs while it runs; lives until the io_context stops.
struct Job {
  Direction direction;
  std::string local;  // after "into this directory" expansion
  Url remote;         // likewise
  ClientOptions options;
  ProgressListener* listener;
  TransferSummary summary;
};

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

// Loops until cancelled by the transfer finishing (see the || in run_job).
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

// One stream slot of the transfer, for as long as it has work: connect, ATTACH, move blocks. A
// connection that breaks or stalls is replaced after a growing pause (its blocks went to the
// other streams meanwhile); after max_reconnects in a row the slot is given up, and the
// transfer fails only when every slot was.
constexpr int max_reconnects = 5;

awaitable<void> run_data_stream(std::shared_ptr<transfer::Transfer> t, std::uint16_t index, wire::Token token,
                                tcp::resolver::results_type endpoints, ClientOptions opt, std::string authority) {
  auto ex = co_await asio::this_coro::executor;
  std::chrono::milliseconds pause{250};
  for (int failures = 0;;) {
    std::optional<Error> failure;
    bool moved = false;
    try {
      auto& stats = t->stream(index);
      auto socket = co_await connect_socket(ex, endpoints, t->settings().tuning, opt.connect_timeout, authority, &stats.local);
      std::shared_ptr<net::Connection> conn = co_await open_data_connection(socket, opt.encrypt, authority);
      wire::Message attach = wire::Attach{token, index};
      co_await net::send_message(*conn, attach);
      wire::Message reply = co_await net::read_message(*conn);
      auto ok = net::expect<wire::AttachOk>(std::move(reply), conn->peer());
      stats.remote.requested = opt.window;
      stats.remote.sndbuf = ok.sndbuf;
      stats.remote.rcvbuf = ok.rcvbuf;
      if (!t->claim_stream(index, conn)) co_return;  // the transfer ended meanwhile
      spdlog::debug("stream {} attached: local {}, server {}", index, describe(stats.local), describe(stats.remote));
      moved = true;
      co_await t->run_stream(conn, index);
      co_return;
    } catch (const Error& e) {
      failure = e;
    } catch (const std::exception& e) {
      failure = Error(Errc::internal, std::string("data stream: ") + e.what());
    }
    if (t->over()) co_return;  // finished, or failed for a reason already reported
    if (moved) failures = 0, pause = std::chrono::milliseconds(250);  // it worked for a while
    if (!transfer::stream_recoverable(*failure) || ++failures > max_reconnects) {
      t->give_up_stream(index, *failure);
      co_return;
    }
    spdlog::debug("stream {}: {}; reconnecting in {} ms", index, failure->what(), pause.count());
    asio::steady_timer timer(ex, pause);
    co_await timer.async_wait(asio::as_tuple(asio::use_awaitable));
    pause = std::min<std::chrono::milliseconds>(pause * 2, std::chrono::seconds(8));
    if (t->over()) co_return;
  }
}

// Ctrl-C or a kill ends the transfer through its normal failure path, so the receiver's temporary
// file is removed instead of left behind. Installed when the job starts; the handler runs on the
// job's strand, so it never races the job's own code.
class InterruptGuard {
 public:
  explicit InterruptGuard(asio::any_io_executor ex) : signals_(ex, SIGINT, SIGTERM) {
    signals_.async_wait([this](const boost::system::error_code& ec, int signo) {
      if (ec) return;
      error_ = Error(Errc::local_io, std::string("interrupted by ") + (signo == SIGINT ? "SIGINT" : "SIGTERM") +
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
// opened and the request sent again; nothing was started on the old one.
awaitable<wire::Message> ask(std::optional<ControlLink>& link, bool reused, const wire::Message& request,
                             const Url& remote, std::chrono::milliseconds connect_timeout, ProgressListener* listener) {
  for (;;) {
    std::optional<Error> stale;
    try {
      co_await net::send_message(*link->connection, request);
      co_return co_await read_open_reply(*link->connection, listener);
    } catch (const Error& e) {
      if (!reused || e.code() != Errc::network) throw;
      stale = e;
    }
    spdlog::debug("reused control connection to {} is gone ({}); opening a new one", link->authority, stale->what());
    link.reset();
    link = co_await open_control(remote, connect_timeout);
    reused = false;
  }
}

// The session's control connection to `remote`'s server: the kept one, or a new one. Returns
// whether it was kept (and so may turn out to be closed: see ask).
awaitable<bool> control_to(std::optional<ControlLink>& link, const Url& remote, std::chrono::milliseconds connect_timeout) {
  const bool reused = link && link->authority == remote.authority();
  if (!reused) {
    link.reset();
    link = co_await open_control(remote, connect_timeout);
  }
  co_return reused;
}

// A request that is not a transfer (SUM, SET_ATTRIBUTES) on the session's control connection.
awaitable<void> run_request(std::optional<ControlLink>& link, const Url& remote, std::chrono::milliseconds connect_timeout,
                            const wire::Message& request, wire::Message& reply) {
  const bool reused = co_await control_to(link, remote, connect_timeout);
  reply = co_await ask(link, reused, request, remote, connect_timeout, nullptr);
}

// One transfer on `link`: the session's control connection to the same server when it has one
// (reused), else a new one that the session keeps for the next transfer. `link_clean` says
// whether the control connection is fit for another transfer after this one: yes after a
// success or a refused OPEN, no after anything that failed midway.
awaitable<void> run_job(asio::io_context& ioc, Job& job, std::optional<ControlLink>& link, bool& link_clean) {
  const ClientOptions& opt = job.options;
  link_clean = false;
  auto ex = co_await asio::this_coro::executor;
  InterruptGuard interrupted(ex);
  Directory cwd = Directory::current();
  std::optional<FileSource> source;
  if (job.direction == Direction::put) {
    source.emplace(cwd, job.local);
  } else if (!opt.overwrite && ::access(job.local.c_str(), F_OK) == 0) {
    throw Error(Errc::exists, job.local + ": destination exists; use --overwrite to replace it");
  }

  const bool reused = co_await control_to(link, job.remote, opt.connect_timeout);
  if (opt.block_size > link->hello.max_block)
    throw Error(Errc::usage, "--block-size " + std::to_string(opt.block_size) + " is over the server's limit of " +
                                 std::to_string(link->hello.max_block) + " bytes");

  wire::Open open;
  open.direction = job.direction == Direction::put ? wire::Direction::put : wire::Direction::get;
  open.checksum = static_cast<std::uint8_t>(opt.checksum);
  open.flags = opt.overwrite ? std::uint32_t{wire::open_overwrite} : 0u;
  if (opt.encrypt) open.flags |= wire::open_encrypt;
  // A file of one block moves on this (kept, already warm) control connection when both ends can:
  // no data connection to open and attach per small file. The server decides a get by its size.
  const std::uint64_t both_caps = wire::cap_on_control | wire::cap_admission;
  if (opt.small_files_on_control && (link->hello.capabilities & both_caps) == both_caps &&
      (!source || source->size() <= opt.block_size))
    open.flags |= wire::open_on_control;
  // No more streams than blocks: a small file needs one connection, not -p of them.
  open.streams = opt.streams;
  if (source) open.streams = static_cast<std::uint16_t>(std::clamp<std::uint64_t>(
                  (source->size() + opt.block_size - 1) / opt.block_size, 1, opt.streams));
  open.block_size = opt.block_size;
  open.window = opt.window;
  open.congestion = opt.congestion;
  open.window_clamp = opt.window_clamp;
  open.compress_mode = static_cast<std::uint8_t>(opt.compression.mode);
  open.compress_level = static_cast<std::uint8_t>(opt.compression.level);
  if (opt.stream_stats && job.direction == Direction::get) {
    open.flags |= wire::open_want_stats;  // the server sends: only it sees cwnd, Send-Q, retransmits
    open.stats_interval_ms = static_cast<std::uint32_t>(opt.perf_interval.count());
  }
  open.size = source ? source->size() : 0;
  open.mtime_ns = source ? source->mtime_ns() : 0;
  open.stall_timeout_ms = static_cast<std::uint32_t>(opt.stall_timeout.count());
  if (!opt.resume) open.flags |= wire::open_no_resume;
  if (opt.sync) open.flags |= wire::open_sync;
  open.path = job.remote.path;
  wire::Message open_message = open;
  wire::Message reply = co_await ask(link, reused, open_message, job.remote, opt.connect_timeout, job.listener);
  // A refusal (not found, exists, permission) leaves the server's session ready for the next OPEN.
  link_clean = std::holds_alternative<wire::ErrorMsg>(reply);
  std::shared_ptr<net::Connection> control = link->connection;
  const std::string& authority = link->authority;
  const auto& data_endpoints = link->data_endpoints;
  auto open_ok = net::expect<wire::OpenOk>(std::move(reply), control->peer());
  link_clean = false;
  // The server may grant fewer streams than asked for (pxferd --max-streams-per-client, or a
  // file of fewer blocks than streams).
  const std::uint16_t streams = open_ok.has_admission ? std::min(open_ok.streams, open.streams) : open.streams;
  spdlog::debug("server accepted {} of {}: {} bytes, block {}, {} streams", job.direction == Direction::put ? "put" : "get",
                job.remote.path, open_ok.size, open_ok.block_size, streams);
  if (open_ok.has_admission) {
    job.summary.server_load = ServerLoad{true, open_ok.active, open_ok.queued, open_ok.max_active};
    spdlog::debug("server load: {} active, {} queued, max_active {}", open_ok.active, open_ok.queued, open_ok.max_active);
    // Fewer streams than blocks is the server's limit; fewer than asked but enough for every
    // block is only the file being small.
    const std::uint64_t blocks = std::max<std::uint64_t>(1, (open_ok.size + open_ok.block_size - 1) / open_ok.block_size);
    if (streams < open.streams && streams < blocks)
      job.summary.warnings.push_back("the server granted " + std::to_string(streams) + " of " + std::to_string(open.streams) +
                                     " streams (its per-client stream limit)");
  }

  transfer::Settings settings{opt.checksum, open_ok.block_size, streams,
                              SocketTuning{opt.window, opt.congestion, opt.window_clamp}};
  settings.compression = opt.compression;
  settings.stall_timeout = opt.stall_timeout;
  std::shared_ptr<transfer::Transfer> t;
  if (source) {
    t = transfer::Transfer::sending(ex, std::move(*source), settings);
  } else {
    std::optional<Error> sink_error;  // no co_await inside a handler
    try {
      SinkOptions sink{opt.overwrite, opt.resume, opt.sync, open_ok.block_size, open_ok.mtime_ns};
      t = transfer::Transfer::receiving(ex, std::make_unique<FileSink>(cwd, job.local, open_ok.size, sink), settings);
    } catch (const Error& e) {
      sink_error = e;
    }
    if (sink_error) {
      co_await net::send_error_quietly(*control, *sink_error);
      throw *sink_error;
    }
  }
  co_await t->exchange_have(*control);
  if (job.listener) t->on_stream_event([listener = job.listener](const std::string& text) { listener->on_stream_event(text); });

  TransferSummary& summary = job.summary;
  summary.bytes = t->file_size();
  summary.streams = streams;
  summary.block_size = open_ok.block_size;
  summary.checksum = opt.checksum;
  summary.protection = describe_protection(*control, opt.encrypt);
  summary.identity = link->auth.identity;
  if (job.listener) job.listener->on_start(summary);

  interrupted.watch(t);
  auto start = Clock::now();
  Progress progress(*t, opt.stream_stats, start);
  const bool on_control = wire::moves_on_control(open.flags, open_ok.size, open_ok.block_size);
  // An empty file, or one the receiver already has whole, needs no data connection.
  for (std::uint16_t i = 0; i < streams && !t->nothing_to_move() && !on_control; ++i)
    asio::co_spawn(asio::make_strand(ioc), run_data_stream(t, i, open_ok.token, data_endpoints, opt, authority),
                   asio::detached);

  std::optional<Error> failure;
  try {
    if (job.listener && opt.perf_interval.count() > 0) {
      auto result = co_await net::first_of(t->run_control(control, on_control),
                                           report_progress(progress, *job.listener, opt.perf_interval));
      summary.checksum_value = result.value_or("");
    } else {
      summary.checksum_value = co_await t->run_control(control, on_control);
    }
  } catch (const Error& e) {
    failure = e;
  }
  interrupted.stop();
  if (failure) {
    t->fail(*failure);
    co_await net::send_error_quietly(*control, *failure);
    throw *failure;
  }
  summary.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  summary.local_buffers = t->stream(0).local;
  summary.remote_buffers = t->stream(0).remote;
  // One warning per end is enough: every stream asked for the same window.
  if (auto w = clamp_warning(summary.local_buffers); !w.empty()) summary.warnings.push_back(w);
  if (auto w = clamp_warning(summary.remote_buffers, "the server's kernel"); !w.empty()) summary.warnings.push_back(w);
  summary.congestion = congestion_of_stream(*t);
  summary.compression = opt.compression;
  summary.wire_bytes = t->wire_bytes();
  summary.resumed_bytes = t->resumed_bytes();
  summary.stream_recoveries = t->stream_recoveries();
  IntervalReport last = progress.sample();
  if (opt.stream_stats) summary.stream_totals = progress.totals();
  link_clean = true;
  if (job.listener) {
    for (const auto& w : summary.warnings) job.listener->on_warning(w);
    job.listener->on_finish(last, summary);
  }
}

void validate(const ClientOptions& opt) {
  if (opt.streams < 1 || opt.streams > wire::max_streams)
    throw Error(Errc::usage, "--streams " + std::to_string(opt.streams) + " is out of range: use 1 to 64");
  if (opt.block_size < 1024 * 1024 || opt.block_size > wire::max_block_size)
    throw Error(Errc::usage, "--block-size " + std::to_string(opt.block_size) + " is out of range: use 1M to 16M");
  if (!opt.congestion.empty()) {
    // Checked on a throwaway socket before anything is connected, so the error comes first.
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    try {
      tune_socket(fd, SocketTuning{0, opt.congestion, 0});
    } catch (...) {
      ::close(fd);
      throw;
    }
    ::close(fd);
  }
}

unsigned threads_for(const ClientOptions& options) {
  if (options.threads > 0) return options.threads;
  return std::max(1u, std::min<unsigned>(std::thread::hardware_concurrency(), options.streams));
}

}  // namespace

// The io_context and its threads live as long as the session; so does the control connection,
// which only the job running at the time touches (one job at a time, each on `strand`).
struct ClientSession::State {
  explicit State(unsigned threads) {
    for (unsigned i = 0; i < threads; ++i) workers.emplace_back([this] { ioc.run(); });
  }
  ~State() {
    link.reset();  // closes the control connection: the server ends the session
    work.reset();  // the threads return once the last transfer's streams have wound down
    for (auto& w : workers) w.join();
  }

  // One attempt of `job`. The control connection is kept for the next job only when the server's
  // side of it is known to be ready for another OPEN.
  void run_attempt(Job& job) {
    bool link_clean = false;
    auto done = asio::co_spawn(strand, run_job(ioc, job, link, link_clean), asio::use_future);
    try {
      done.get();
    } catch (...) {
      if (!link_clean) link.reset();
      throw;
    }
    if (!link_clean) link.reset();
  }

  // A request and its answer; the connection stays kept (the server answers every request in
  // full), unless the exchange itself failed.
  wire::Message request(const Url& remote, std::chrono::milliseconds connect_timeout, const wire::Message& message) {
    wire::Message reply;
    try {
      asio::co_spawn(strand, run_request(link, remote, connect_timeout, message, reply), asio::use_future).get();
    } catch (...) {
      link.reset();
      throw;
    }
    return reply;
  }

  // Runs the job, and again after a failure worth retrying: each attempt resumes from what the
  // receiver kept. Pauses double from first_backoff, each drawn from [0.5, 1.5) of its nominal
  // value so that many clients cut off together do not come back together.
  TransferSummary run(Job job);

  asio::io_context ioc;
  asio::executor_work_guard<asio::io_context::executor_type> work{ioc.get_executor()};
  asio::strand<asio::io_context::executor_type> strand{asio::make_strand(ioc)};
  std::optional<ControlLink> link;
  std::vector<std::thread> workers;
};

TransferSummary ClientSession::State::run(Job job) {
  validate(job.options);
  const unsigned total = job.options.retries + 1;
  auto pause = job.options.first_backoff;
  std::optional<std::mt19937_64> random;  // seeded on the first retry: random_device is not free
  for (unsigned attempt = 1;; ++attempt) {
    try {
      run_attempt(job);
      job.summary.attempts = attempt;
      return job.summary;
    } catch (const Error& e) {
      if (attempt >= total || !worth_retrying_transfer(e.code())) throw;
      double delay = std::uniform_real_distribution<double>(0.5, 1.5)(random ? *random : random.emplace(std::random_device{}())) * static_cast<double>(pause.count()) / 1000.0;
      if (job.listener) job.listener->on_retry(attempt + 1, total, delay, e.what());
      std::this_thread::sleep_for(std::chrono::duration<double>(delay));
      pause = std::min<std::chrono::milliseconds>(pause * 2, std::chrono::minutes(1));
    }
  }
}

bool worth_retrying_transfer(Errc code) {
  return code == Errc::network || code == Errc::protocol || code == Errc::integrity || code == Errc::internal;
}

ClientSession::ClientSession(const ClientOptions& options) : state_(std::make_unique<State>(threads_for(options))) {}
ClientSession::~ClientSession() = default;

TransferSummary ClientSession::put(const std::string& local, const Url& remote, const ClientOptions& options,
                                   ProgressListener* listener) {
  Url target = remote;
  if (target.trailing_slash) target.path += basename_of(local);
  Job job{Direction::put, local, target, options, listener, {}};
  job.summary.direction = Direction::put;
  job.summary.source = local;
  job.summary.destination = target.to_string();
  return state_->run(std::move(job));
}

TransferSummary ClientSession::get(const Url& remote, const std::string& local, const ClientOptions& options,
                                   ProgressListener* listener) {
  if (remote.trailing_slash)
    throw Error(Errc::usage, remote.to_string() + ": names a directory; name a file, or copy the directory with get -r");
  std::string target = local;
  if (target.ends_with('/') || is_directory(target)) {
    if (!target.ends_with('/')) target += '/';
    target += basename_of(remote.path);
  }
  Job job{Direction::get, target, remote, options, listener, {}};
  job.summary.direction = Direction::get;
  job.summary.source = remote.to_string();
  job.summary.destination = target;
  return state_->run(std::move(job));
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
  return ClientSession(options).put(local, remote, options, listener);
}

TransferSummary get_file(const Url& remote, const std::string& local, const ClientOptions& options,
                         ProgressListener* listener) {
  return ClientSession(options).get(remote, local, options, listener);
}

}  // namespace pxfer
