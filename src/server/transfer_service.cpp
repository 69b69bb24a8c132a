#include "transfer_service.hpp"

#include <boost/asio/ip/address.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <functional>

#include <spdlog/spdlog.h>

#include "net/frame_io.hpp"
#include "net/tls.hpp"
#include "net/host_settings.hpp"
#include "pxfer/io/emulated_disk.hpp"
#include "pxfer/core/rate_meter.hpp"
#include "pxfer/io/socket_tuning.hpp"
#include "plan/negotiate.hpp"
#include "accounting.hpp"
#include "engine/transfer.hpp"

namespace pxfer::server {
namespace {

namespace asio = boost::asio;

bool has_word(const std::string& list, const std::string& word) {
  std::size_t pos = 0;
  while ((pos = list.find(word, pos)) != std::string::npos) {
    bool starts = pos == 0 || list[pos - 1] == ' ';
    bool ends = pos + word.size() == list.size() || list[pos + word.size()] == ' ';
    if (starts && ends) return true;
    pos += word.size();
  }
  return false;
}


}  // namespace

std::string client_address(net::Connection& conn) {
  boost::system::error_code ec;
  auto ep = conn.socket().remote_endpoint(ec);
  if (ec) return conn.peer();
  auto address = ep.address();
  if (address.is_v6() && address.to_v6().is_v4_mapped())
    address = asio::ip::make_address_v4(asio::ip::v4_mapped, address.to_v6());
  return address.to_string();
}

void TransferService::refuse_if_draining() const {
  if (refusing_) throw Error(Errc::network, "the server is shutting down and takes no new transfers; retry later");
}

TransferService::TransferService(const ServerOptions& options, const Directory& root, std::shared_ptr<Admission> admission,
                                 Metrics& metrics, BlockingPool& blocking)
    : options_(options), root_(root), admission_(std::move(admission)), metrics_(metrics),
      blocking_(blocking),
      unfinished_(options.max_unfinished_per_identity) {
  // --emulate-disk-rate paces every write of this process, a third-party pull's too.
  if (options.emulate_disk_rate > 0) set_emulated_disk_rate(static_cast<double>(options.emulate_disk_rate));
}

// Opening may block (a slow disk, preallocating a put's space): this runs on the blocking pool.
// A get's source is opened O_NONBLOCK and must be a regular file (FileSource).
TransferService::OpenedFile TransferService::open_file(const wire::Open& open) {
  OpenedFile file;
  if (open.direction == wire::Direction::get) {
    file.source = std::make_unique<FileSource>(root_, open.path);
    return file;
  }
  file.sink = std::make_unique<FileSink>(root_, open.path, open.size, sink_options(open.flags, open.block_size, open.mtime_ns));
  return file;
}

SinkOptions TransferService::sink_options(std::uint32_t flags, std::uint32_t block_size, std::int64_t source_mtime_ns) {
  SinkOptions sink{(flags & wire::open_overwrite) != 0, (flags & wire::open_no_resume) == 0, (flags & wire::open_sync) != 0,
                   block_size, source_mtime_ns, options_.partial_max_age.count(),
                   options_.emulate_disk_rate > 0 ? emulated_disk() : nullptr, &pacing_stop_};
  sink.max_file_size = options_.max_file_size;
  sink.store_checksum = options_.stored_checksums;
  return sink;
}

// Opens the file the client named; errors become an ERROR frame and the session goes on.
std::shared_ptr<transfer::Transfer> TransferService::open_transfer(wire::Open& open, std::uint64_t caps,
                                                                   asio::any_io_executor ex, OpenedFile file) {
  transfer::Settings settings = transfer::server_settings(open, transfer::ServerPolicy{options_.attach_timeout}, caps);
  if (open.direction == wire::Direction::get) {
    open.streams = transfer::server_get_streams(open, caps, file.source->size());
    settings.streams = open.streams;
    // A stored checksum that still describes the file spares the sender its pass over the bytes;
    // without one, the one computed is kept once the client confirmed it (io/stored_checksum.hpp).
    std::optional<std::string> stored;
    std::optional<FileStamp> seen;
    if (options_.stored_checksums) {
      stored = stored_checksum(file.source->fd(), settings.checksum);
      if (!stored) seen = stamp_of(file.source->fd());
    }
    auto t = transfer::Transfer::sending(ex, std::move(*file.source), settings, std::move(stored));
    if (seen) t->keep_checksum(*seen);
    // This side sends: its streams' send buffers are its own to pin (core/send_window.hpp).
    t->on_window_event([path = open.path](const std::string& text) { spdlog::info("path={} get: {}", path, text); });
    return t;
  }
  return transfer::Transfer::receiving(ex, std::move(file.sink), settings);
}

// The file is opened on the blocking pool (its Error rethrown here), the transfer made here.
net::awaitable<std::shared_ptr<transfer::Transfer>> TransferService::open_off_thread(wire::Open& open,
                                                                                  std::uint64_t caps) {
  if (!open.congestion.empty() && !has_word(available_congestion_controls(), open.congestion))
    throw Error(Errc::usage, "congestion control '" + open.congestion + "' is not available on the server; available: " +
                                 available_congestion_controls());
  OpenedFile file;
  // A get whose path the kernel has cached opens here: no I/O can happen, and the pool's two
  // thread hops cost more than the open (about 10 % of pxferd's CPU per small file, docs/
  // performance.md section 5). Everything else, and a put always, opens on the pool.
  if (open.direction == wire::Direction::get) {
    if (auto cached = FileSource::open_if_cached(root_, open.path)) file.source = std::make_unique<FileSource>(std::move(*cached));
  }
  if (!file.source) {
    std::function<void()> open_it = [&] { file = open_file(open); };
    co_await blocking_.run(open_it);
  }
  auto ex = co_await asio::this_coro::executor;
  co_return open_transfer(open, caps, ex, std::move(file));
}

namespace {

// Waits in steps of `step` while `busy()` holds, at most `steps` times; no timer when it does not.
net::awaitable<void> wait_while(const std::function<bool()>& busy, std::chrono::milliseconds step, int steps) {
  if (!busy()) co_return;
  asio::steady_timer timer(co_await asio::this_coro::executor);
  for (int i = 0; i < steps && busy(); ++i) {
    timer.expires_after(step);
    co_await timer.async_wait(asio::use_awaitable);
  }
}

}  // namespace

net::awaitable<void> TransferService::take_over(const wire::Open& open, const std::string& owner) {
  // A PUT_SMALL of the same file still being written (its answer lost with its connection): it
  // ends within a disk write, and its commit record then answers this retry.
  std::function<bool()> small_running = [&] { return registry_.small_running(open.transfer_id, owner); };
  co_await wait_while(small_running, std::chrono::milliseconds(10), 200);
  std::weak_ptr<transfer::Transfer> running = registry_.running(open.transfer_id, owner);
  auto old = running.lock();
  if (!old) co_return;
  spdlog::info("path={} a retry of a running put takes it over", open.path);
  old->fail(Error(Errc::network, "a retry of this transfer took over"));
  old.reset();
  // Its streams and control exchange end at once; the file's lock goes with the last of them.
  std::function<bool()> still_running = [&] { return !running.expired(); };
  co_await wait_while(still_running, std::chrono::milliseconds(50), 200);
}

std::shared_ptr<transfer::Transfer> TransferService::committed_again(const wire::Open& open, const std::string& owner,
                                                                     std::uint64_t caps, asio::any_io_executor ex) {
  auto c = registry_.committed(open.transfer_id);
  if (!c || c->owner != owner || c->size != open.size || c->mtime_ns != open.mtime_ns || c->checksum_algo != open.checksum)
    return nullptr;
  // Still there, as it was committed (a file removed or replaced since is a new transfer).
  int fd = -1;
  try {
    fd = root_.open_file(open.path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
  } catch (const Error&) {
    return nullptr;
  }
  struct stat st {};
  bool same = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && static_cast<std::uint64_t>(st.st_size) == c->size &&
              st.st_ino == c->inode && st.st_mtim.tv_sec * 1'000'000'000LL + st.st_mtim.tv_nsec == c->file_mtime_ns;
  ::close(fd);
  if (!same) return nullptr;
  transfer::Settings settings = transfer::server_settings(open, transfer::ServerPolicy{options_.attach_timeout}, caps);
  spdlog::info("path={} a retry of a put that committed already: answered from its record", open.path);
  return transfer::Transfer::already_committed(ex, settings, c->size, c->checksum);
}

void TransferService::remember_commit(const wire::Token& id, const std::string& path, const std::string& owner,
                                      std::uint64_t size, std::int64_t source_mtime_ns, std::uint8_t checksum_algo,
                                      const std::string& checksum) {
  TransferRegistry::Committed c{owner, size, source_mtime_ns, checksum_algo, checksum};
  try {
    int fd = root_.open_file(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
    struct stat st {};
    if (::fstat(fd, &st) == 0) {
      c.inode = st.st_ino;
      c.file_mtime_ns = st.st_mtim.tv_sec * 1'000'000'000LL + st.st_mtim.tv_nsec;
    }
    ::close(fd);
  } catch (const Error&) {
    return;  // gone already: nothing a retry could be answered with
  }
  registry_.add_committed(id, std::move(c));
}

// OPEN_OK, with the granted stream count and the server's load for a client that understands them.
wire::Message TransferService::open_ok_for(const wire::Token& token, const transfer::Transfer& t, const wire::Open& open,
                                           std::uint64_t caps) const {
  wire::OpenOk ok{token, t.file_size(), open.block_size, t.source_mtime_ns()};
  if (caps & wire::cap_admission) {
    auto load = admission_->load();
    ok.has_admission = true;
    ok.streams = open.streams;
    ok.active = load.active;
    ok.queued = load.queued;
    ok.max_active = load.max_active;
    // The client's -p auto sizes a get's streams by the sender's congestion control (this side's).
    if (caps & wire::cap_sender_congestion) {
      ok.has_congestion = true;
      ok.congestion = open.congestion.empty() ? system_congestion_control() : open.congestion;
    }
  }
  return ok;
}

// Waits for an admission slot, telling the client its place in line (QUEUED frames). Lowers
// open.streams to what was granted (--max-streams-per-client) when the client can take fewer.
net::awaitable<std::unique_ptr<Admission::Slot>> TransferService::wait_for_slot(std::shared_ptr<net::Connection> conn,
                                                                               const std::string& path, std::uint16_t& streams,
                                                                               bool can_lower, bool tell_client) {
  const auto queued_at = Clock::now();
  const std::string client = client_address(*conn);
  // Named, not a temporary in the co_await below: g++ 12 mishandles those.
  Admission::OnWait on_wait = [conn, path, tell_client](QueueState s) -> net::awaitable<void> {
    spdlog::info("client={} path={} queued position={} active={} queued={}", conn->peer(), path, s.position, s.active,
                 s.queued);
    if (!tell_client) co_return;
    wire::Message queued = wire::Queued{s.position, s.active, s.queued};
    co_await net::send_message(*conn, queued);
  };
  AdmissionPolicy::Request request{client, streams, can_lower};
  auto slot = co_await admission_->admit(request, options_.queue_timeout, on_wait);
  const unsigned asked = streams;
  streams = static_cast<std::uint16_t>(slot->streams());
  double waited = std::chrono::duration<double>(Clock::now() - queued_at).count();
  metrics_.queue_wait.observe(waited);
  // One info line per transfer is the rule; an admission is only news when the transfer waited
  // or was granted fewer streams than it asked for.
  const auto level = waited > 0.001 || asked != streams ? spdlog::level::info : spdlog::level::debug;
  if (spdlog::should_log(level))  // its figures take the admission's lock: not for a line nobody reads
    spdlog::log(level, "client={} path={} admitted active={} max_active={} waited={:.2f}s streams={} asked={} client_streams={}",
                conn->peer(), path, admission_->active(), admission_->max_active(), waited, streams, asked,
                admission_->streams_of(client));
  co_return slot;
}

void set_error(TransferAccount& a, const char* result, const Error& e) {
  a.result = result;
  a.error_class = std::string(errc_name(e.code()));
  a.error = e.what();
}

TransferAccount account_of(net::Connection& conn, const std::string& path, bool put, unsigned streams,
                           std::uint8_t checksum, const TransferService::Who& who, std::string id) {
  TransferAccount a;
  a.id = std::move(id);
  a.client = conn.peer();
  a.identity = who.identity;
  a.agent = who.agent;
  a.path = path;
  a.direction = put ? "put" : "get";
  a.streams = streams;
  a.checksum_algo = std::string(checksum_name(static_cast<ChecksumAlgo>(checksum)));
  return a;
}

namespace {

TransferAccount account_of(net::Connection& conn, const wire::Open& open, const TransferService::Who& who,
                           const wire::Token* token) {
  std::string id = "-";
  if (token) {
    char hex[9];
    std::snprintf(hex, sizeof hex, "%02x%02x%02x%02x", (*token)[0], (*token)[1], (*token)[2], (*token)[3]);
    id = hex;
  }
  return account_of(conn, open.path, open.direction == wire::Direction::put, open.streams, open.checksum, who, std::move(id));
}

// The metrics of a transfer: its bytes counted while they move, then its end.
Metrics::FlowId start_flow(Metrics& m, bool put, const std::shared_ptr<transfer::Transfer>& t) {
  return m.start_flow(put, [weak = std::weak_ptr(t)] {
    auto alive = weak.lock();
    return alive ? alive->bytes_moved() : 0;
  });
}

void count_ended(Metrics& m, bool put, transfer::Transfer& t, const std::optional<Error>& failure, double seconds,
                 const std::string& identity) {
  const auto why = failure ? std::optional<Errc>(failure->code()) : std::nullopt;
  m.transfer_ended(put, failure ? Outcome::failed : Outcome::ok, 0, why);  // its bytes: the flow counted them
  m.transfer_ran(put, seconds, t.file_size());
  m.transfer_details(put, identity, t.bytes_moved(), why, t.stream_recoveries());
}

}  // namespace

net::awaitable<void> TransferService::serve(std::shared_ptr<net::Connection> conn, wire::Open& open, std::uint64_t caps,
                                            const Who& who) {
  std::shared_ptr<transfer::Transfer> t;
  std::unique_ptr<Admission::Slot> slot;
  std::optional<Error> refused;
  // Counted before the drain flag is read, so a drain that sees in_service() == 0 knows that
  // every later OPEN reads the flag set and is refused.
  InService counted(in_service_);
  const bool has_id = open.direction == wire::Direction::put && open.has_transfer_id;
  const std::string owner = who.identity + '\n' + open.path;
  UnfinishedSpace::Claim claim;  // a put's claimed size, held until it ends
  try {
    refuse_if_draining();
    if (open.direction == wire::Direction::put) claim = unfinished_.take(who.identity, open.size, open.path);
    slot = co_await wait_for_slot(conn, open.path, open.streams, (caps & wire::cap_admission) != 0, true);
    refuse_if_draining();
    if (has_id) co_await take_over(open, owner);
    auto ex = co_await asio::this_coro::executor;
    // A put with --overwrite asks for the file to be written again (a benchmark round, a source
    // rewritten within its mtime's granularity): it is never answered from the commit record, so
    // its retry after a lost RESULT moves the file again, which still ends in success.
    if (has_id && !(open.flags & wire::open_overwrite)) t = committed_again(open, owner, caps, ex);
    if (!t) t = co_await open_off_thread(open, caps);
  } catch (const Error& e) {
    refused = e;
  }
  if (refused) {
    TransferAccount a = account_of(*conn, open, who, nullptr);
    set_error(a, "refused", *refused);
    spdlog::info("{}", logfmt_line(a));
    metrics_.transfer_ended(open.direction == wire::Direction::put, Outcome::refused, 0, refused->code());
    co_await net::send_error_quietly(*conn, *refused);
    co_return;
  }
  auto token = registry_.add(t, (open.flags & wire::open_encrypt) != 0);
  t->set_far_end("the client at " + conn->peer());
  if (has_id) registry_.add_running(open.transfer_id, owner, t);
  // Before OPEN_OK: no data stream can attach before the client has the token.
  t->set_data_key(net::export_keying_material(*conn, std::string(data_exporter_label), token));
  // On the control connection no stream attaches: its own stall watch and heartbeats suffice.
  const bool on_control = transfer::server_on_control(open, caps, t->file_size());
  if (!on_control) t->arm_attach_deadline();
  auto start = Clock::now();
  const bool put = open.direction == wire::Direction::put;
  const auto flow = start_flow(metrics_, put, t);
  std::string checksum;
  std::optional<Error> failure;
  try {
    wire::Message open_ok = open_ok_for(token, *t, open, caps);
    co_await net::send_message(*conn, open_ok);
    co_await t->exchange_have(*conn);
    checksum = co_await t->run_control(conn, on_control);
  } catch (const Error& e) {
    failure = e;
  }
  metrics_.end_flow(flow);  // before the registry forgets it: its last bytes are counted once
  registry_.remove(token);
  // Recorded once the file is in place, whatever happened after (a RESULT that could not be sent
  // to a client that died at that moment is the very case a retry must be answered for).
  if (auto committed = t->committed_here(); has_id && committed)
    remember_commit(open.transfer_id, open.path, owner, t->file_size(), open.mtime_ns, open.checksum, *committed);
  TransferAccount a = account_of(*conn, open, who, &token);
  a.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  a.rate_mbps = a.seconds > 0 ? static_cast<double>(t->bytes_moved()) / a.seconds / 1e6 : 0;
  a.resumed = t->resumed_bytes();
  a.recovered_streams = t->stream_recoveries();
  count_ended(metrics_, put, *t, failure, a.seconds, who.identity);
  if (failure) {
    t->fail(*failure);
    a.bytes = t->bytes_moved();
    set_error(a, "failed", *failure);
    spdlog::warn("{}", logfmt_line(a));
    co_await net::send_error_quietly(*conn, *failure);
    throw *failure;  // the control connection is in an unknown state: end the session
  }
  a.bytes = t->file_size();
  a.checksum = checksum;
  a.result = "ok";
  spdlog::info("{}", logfmt_line(a));
}

// A data stream proves it belongs to the transfer (issue 11): the token only names the transfer
// (it crosses clear streams); the stream answers a fresh nonce with an HMAC under the key both
// ends took from the control connection's TLS exporter. The nonce is the server's (ATTACH_CHALLENGE)
// or, with cap_attach_proven, the client's, sent with its proof in ATTACH and taken once per
// transfer. Every refusal is the same ERROR and closes the connection; only a proven stream takes a
// free slot.
net::awaitable<bool> TransferService::attach(std::shared_ptr<net::Connection> conn, const wire::Attach& attach,
                                             bool kept) {
  auto found = registry_.find(attach.token);
  if (found.transfer && found.encrypted && !conn->tls()) {
    Error clear(Errc::permission, "this transfer requires TLS on its data streams (--encrypt)");
    co_await net::send_error_quietly(*conn, clear);
    co_return false;
  }
  auto t = found.transfer;
  AttachNonce nonce{};
  bool proven = false, replayed = false;
  if (t && attach.has_proof) {
    // The client's nonce (cap_attach_proven): the MAC first, so only the transfer's own client
    // spends a nonce; then the nonce, so a copy of this ATTACH never joins again.
    nonce = attach.nonce;
    proven = equal_constant_time(attach.mac, t->attach_proof_on(*conn, attach.token, attach.stream, nonce));
    replayed = proven && !t->take_attach_nonce(nonce);
    proven = proven && !replayed;
  } else if (t) {
    nonce = random_nonce();
    wire::Message challenge = wire::AttachChallenge{nonce};
    co_await net::send_message(*conn, challenge);
    auto reply = co_await net::read_login_message_within(*conn, options_.hello_timeout);
    auto* proof = reply ? std::get_if<wire::AttachProof>(&*reply) : nullptr;
    proven = proof && equal_constant_time(proof->mac, t->attach_proof_on(*conn, attach.token, attach.stream, nonce));
  }
  if (t) {
    if (proven) conn->mark_logged_in();
    if (replayed)
      spdlog::warn("client={} data stream {} refused: its ATTACH's nonce was used before (a copy of an ATTACH, "
                   "replayed by someone on the path), or the transfer took its limit of ATTACHes",
                   conn->peer(), attach.stream);
    else if (!proven)
      spdlog::warn("client={} data stream {} refused: no valid proof of the transfer's key (an intruder, or a "
                   "client that is not the one that opened it)",
                   conn->peer(), attach.stream);
  }
  std::string why = "unknown or expired session token";
  if (!proven || !t->claim_stream(attach.stream, conn, &why)) {
    // Same answer for an unknown token and a bad proof: nothing to learn by guessing.
    Error refused(proven ? Errc::network : Errc::permission, proven ? why : "unknown or expired session token");
    co_await net::send_error_quietly(*conn, refused);
    // A proven stream that came too late (its transfer ended while it connected) or too early (its
    // slot's last connection not yet ended) leaves nothing in flight: the client may attach the
    // connection to another transfer (cap_kept_streams). Anything unproven is closed.
    co_return proven;
  }
  auto& stats = t->stream(attach.stream);
  stats.local = tune_socket(conn->socket().native_handle(), t->settings().tuning);
  wire::Message attach_ok = wire::AttachOk{stats.local.sndbuf, stats.local.rcvbuf};
  co_await net::send_message(*conn, attach_ok);
  metrics_.streams_attached.fetch_add(1, std::memory_order_relaxed);
  if (kept) metrics_.streams_on_kept_connections.fetch_add(1, std::memory_order_relaxed);
  co_await t->run_stream(conn, attach.stream, stream_block_key(t->data_key(), attach.stream, nonce));
  co_return true;
}

TransferService::Running TransferService::running() const {
  Running r;
  for (auto& t : registry_.all()) {
    ++r.transfers;
    r.bytes += t->bytes_moved();
    r.streams += t->settings().streams;
  }
  r.draining = refusing_;
  return r;
}

void TransferService::abort_all(const Error& why) {
  for (auto& t : registry_.all()) t->fail(why);
}

}  // namespace pxfer::server
