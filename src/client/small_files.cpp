// Many small files on one control connection (cap_small_files, docs/protocol.md "Small files"):
// each file moves whole in one frame, PUT_SMALL with its bytes or GET_SMALL answered with them,
// and up to limits::small_files_in_flight requests are outstanding at once, so a file costs its
// bytes and a little work at each end instead of four round trips, a Transfer and its watchers
// (docs/performance.md section 8). The server answers in the order it read the requests; every
// answer names its request's id.
#include "small_files.hpp"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <deque>
#include <vector>

#include "io/commit_group.hpp"
#include "job.hpp"
#include "kept_link.hpp"
#include "local_tree.hpp"
#include "net/frame_io.hpp"
#include "net/quiet_wait.hpp"
#include "net/race.hpp"
#include "net/tls.hpp"
#include "pxfer/common/log_safe.hpp"

namespace pxfer {
namespace {

namespace asio = boost::asio;
using net::awaitable;

// The small-file channel (cap_small_channel, transfer/small_channel.hpp): SMALL_CHANNEL on the
// control connection, then a data connection that joins it as any data stream joins its transfer
// (ATTACH, the server's nonce, the proof under the control connection's exporter). Every reply
// has a deadline: a server that accepts and says nothing is a stall.
awaitable<std::shared_ptr<transfer::SmallChannel>> open_small_channel(const ControlLink& link, const ClientOptions& opt) {
  auto& control = *link.connection;
  const auto limit = std::max(opt.stall_timeout, std::chrono::milliseconds(1000));
  auto reply = [&](net::Connection& conn, const char* what) -> awaitable<wire::Message> {
    auto m = co_await net::read_message_within(conn, limit);
    if (!m)
      throw Error(Errc::network, "pxferd at " + link.authority + " did not answer " + what + " within " +
                                     std::to_string(limit.count() / 1000) + " s");
    co_return std::move(*m);
  };
  const wire::Message ask = wire::SmallChannel{};
  co_await net::send_message(control, ask);
  auto ok = net::expect<wire::SmallChannelOk>(co_await reply(control, "SMALL_CHANNEL"), link.authority);
  const MacKey key = net::export_keying_material(control, std::string(data_exporter_label), ok.token);
  const SocketTuning tuning{opt.window, opt.congestion, opt.window_clamp};
  auto ex = co_await asio::this_coro::executor;  // named: no co_await inside another's arguments (g++ 12)
  auto socket = co_await connect_socket(ex, link.data_endpoints, tuning, opt.connect_timeout, link.authority, nullptr);
  const bool clear = false;  // the channel is only asked for without --encrypt
  auto conn = co_await open_data_connection(socket, clear, link);
  const wire::Message attach = wire::Attach{ok.token, 0};
  co_await net::send_message(*conn, attach);
  auto challenge = net::expect<wire::AttachChallenge>(co_await reply(*conn, "the channel's ATTACH"), link.authority);
  const wire::Message proof = wire::AttachProof{attach_proof(key, ok.token, 0, challenge.nonce)};
  co_await net::send_message(*conn, proof);
  net::expect<wire::AttachOk>(co_await reply(*conn, "the channel's ATTACH_PROOF"), link.authority);
  co_return std::make_shared<transfer::SmallChannel>(conn, transfer::small_channel_keys(key, challenge.nonce),
                                                     transfer::SmallChannel::End::client);
}

// A request on the wire and what its answer is checked against.
struct Pending {
  std::size_t index = 0;
  std::uint64_t bytes = 0;   // counted against limits::small_bytes_in_flight
  std::string value;         // a put's digest of what it sent
  Clock::time_point sent;
};

class SmallRun {
 public:
  // `reported[i]`: files[i] has ended (set here as each ends; such files are skipped by a rerun).
  SmallRun(ControlLink& link, const std::vector<SmallFile>& files, const ClientOptions& options, const SmallDone& done,
           std::vector<bool>& reported)
      : link_(link), files_(files), opt_(options), done_(done), reported_(reported), algo_(options.checksum) {}

  // The whole run under one deadline: it fails when neither a request could be sent nor an answer
  // came for as long as a transfer may stall (a timer per answer cost a system call per file).
  awaitable<void> run() {
    const auto deadline = std::max(opt_.stall_timeout, opt_.connect_timeout);
    progress_ = Clock::now();
    const bool finished = co_await net::first_of(exchange(), silence(deadline));
    if (!finished)
      throw Error(Errc::network, "pxferd at " + link_.authority + " did not answer a small file within " +
                                     std::to_string(deadline.count() / 1000) + " s; check the server and the network");
  }
  bool answered() const { return answered_; }

 private:
  awaitable<void> exchange() {
    auto& conn = *link_.connection;
    if ((link_.hello.capabilities & wire::cap_small_channel) && !opt_.encrypt && !link_.small_channel)
      link_.small_channel = co_await open_small_channel(link_, opt_);
    channel_ = link_.small_channel.get();
    std::deque<Pending> pending;
    std::uint64_t in_flight = 0;
    std::size_t next = 0;
    std::vector<wire::Message> requests;  // prepared, sent together: one write, one wake-up of the server
    std::size_t request_bytes = 0;
    while (next < files_.size() || !pending.empty()) {
      // Refilled once half the window has been answered, so that requests leave in runs and the
      // server reads them together (it serves what it has read as one batch), not one per answer.
      const bool refill = pending.size() <= limits::small_files_in_flight / 2 && in_flight <= limits::small_bytes_in_flight / 2;
      while (refill && next < files_.size() && pending.size() < limits::small_files_in_flight &&
             in_flight < limits::small_bytes_in_flight) {
        if (reported_[next]) {
          ++next;
          continue;
        }
        Pending p;
        p.index = next++;
        std::optional<wire::Message> request = prepare(p);
        if (!request) continue;  // answered already: a local failure or a fallback
        p.sent = Clock::now();
        in_flight += p.bytes;
        request_bytes += p.bytes;
        pending.push_back(std::move(p));
        requests.push_back(std::move(*request));
        if (request_bytes >= send_run) {
          co_await send_requests(requests);
          request_bytes = 0;
        }
      }
      if (!requests.empty()) co_await send_requests(requests);
      if (pending.empty()) continue;
      // Files received and written are made durable together when nothing else is waiting to be
      // read, or once commit_group_files of them wait (store).
      if (!conn.has_buffered_input()) settle();
      wire::Message reply = co_await net::read_message(conn);
      // A get's bytes follow on the channel (one SMALL_DATA per answer that has any).
      if (auto* got = std::get_if<wire::GetSmallOk>(&reply); got && channel_ && got->code == 0 && !got->too_large)
        got->data = co_await channel_->receive(got->id);
      progress_ = Clock::now();
      Pending p = std::move(pending.front());
      pending.pop_front();
      in_flight -= p.bytes;
      answered_ = true;
      finish(p, std::move(reply));
    }
    settle();
  }

  // The requests on the control connection, then their puts' bytes on the channel (the server
  // reads each PUT_SMALL, then its bytes).
  awaitable<void> send_requests(std::vector<wire::Message>& requests) {
    co_await net::send_messages(*link_.connection, requests);
    requests.clear();
    if (!channel_data_.empty()) co_await channel_->send(channel_data_);
    channel_data_.clear();
    progress_ = Clock::now();
  }

  // Ends (and so ends the run) once nothing moved for `deadline`; quietly when cancelled.
  awaitable<void> silence(std::chrono::milliseconds deadline) {
    co_await asio::this_coro::throw_if_cancelled(false);
    asio::steady_timer timer(co_await asio::this_coro::executor);
    for (;;) {
      timer.expires_after(std::min<std::chrono::milliseconds>(deadline, std::chrono::seconds(1)));
      if (co_await net::wait_unless_cancelled(timer)) co_return;
      if (Clock::now() - progress_ >= deadline) co_return;
    }
  }

  // The request for files_[p.index], or nullopt when the file ended here already.
  std::optional<wire::Message> prepare(Pending& p) {
    const SmallFile& f = files_[p.index];
    try {
      if (f.direction == Direction::put) return put_request(p, f);
      if (!opt_.overwrite && !f.new_directory && ::access(f.local.c_str(), F_OK) == 0)
        throw Error(Errc::exists, f.local + ": destination exists; use --overwrite to replace it");
      wire::GetSmall get;
      get.id = id_of(p.index);
      get.checksum = static_cast<std::uint8_t>(algo_);
      get.path = f.remote.path;
      // Counts nothing against small_bytes_in_flight: a GET_SMALL is a few bytes, and its answers
      // are read one at a time however large they are (a byte bound here capped a get at 8 files
      // in flight: 2,000-file get -r, pxferd 280-320 ms of CPU against 240-260 without it).
      p.bytes = 0;
      return get;
    } catch (const Error& e) {
      failed(p.index, e);
    } catch (const std::exception& e) {
      failed(p.index, Error(Errc::internal, f.local + ": " + e.what()));
    }
    return std::nullopt;
  }

  std::optional<wire::Message> put_request(Pending& p, const SmallFile& f) {
    FileSource source(cwd(), f.local);
    if (source.size() > limits::max_small_file) {
      fallback(p.index);
      return std::nullopt;
    }
    wire::PutSmall put;
    put.id = id_of(p.index);
    put.flags = flags();
    put.checksum = static_cast<std::uint8_t>(algo_);
    put.path = f.remote.path;
    put.data.resize(source.size());
    if (!put.data.empty()) source.read_at(0, put.data);
    source.check_unchanged();
    put.value = checksum_of_bytes(algo_, put.data);
    put.mtime_ns = source.mtime_ns();
    put.transfer_id = transfer_id_of(Direction::put, f.local, f.remote, transfer::SourceFacts{source.size(), source.mtime_ns()});
    p.value = put.value;
    p.bytes = put.data.size();
    if (channel_) channel_data_.emplace_back(channel_->seal(put.id, std::exchange(put.data, {})));
    return put;
  }

  // The answer to `p`: an ERROR frame means the session itself failed (thrown, every file still in
  // flight fails with it); a file's own failure is in its answer.
  void finish(const Pending& p, wire::Message reply) {
    const SmallFile& f = files_[p.index];
    const std::string peer = link_.connection->peer();
    const bool file_answer = std::holds_alternative<wire::PutSmallOk>(reply) || std::holds_alternative<wire::GetSmallOk>(reply);
    try {
      if (f.direction == Direction::put) {
        auto ok = net::expect<wire::PutSmallOk>(std::move(reply), peer);
        check_id(ok.id, p);
        if (ok.code != 0) throw Error(errc_from_wire(ok.code), peer + ": " + log_safe(ok.message));
        if (algo_ != ChecksumAlgo::none && ok.value != p.value)
          throw Error(Errc::integrity, f.remote.to_string() + ": checksum mismatch: sent " + p.value + ", pxferd stored " +
                                           log_safe(ok.value));
        succeeded(p, p.bytes, p.value);
        return;
      }
      auto ok = net::expect<wire::GetSmallOk>(std::move(reply), peer);
      check_id(ok.id, p);
      if (ok.code != 0) throw Error(errc_from_wire(ok.code), peer + ": " + log_safe(ok.message));
      if (ok.too_large) {
        fallback(p.index);
        return;
      }
      store(p, ok);
    } catch (const Error& e) {
      if (e.code() == Errc::protocol || !file_answer) throw;  // the session is in an unknown state
      failed(p.index, e);
    }
  }

  // A get's bytes, checked against the server's digest, into a hidden temporary beneath the
  // directory the user named (get -r); the file takes its final name, durably, with the rest of
  // its commit group (settle), and only then counts as done.
  void store(const Pending& p, const wire::GetSmallOk& ok) {
    const SmallFile& f = files_[p.index];
    if (ok.data.size() != ok.size)
      throw Error(Errc::protocol, "pxferd at " + link_.authority + " sent " + std::to_string(ok.data.size()) +
                                      " bytes of " + f.remote.to_string() + " where it said " + std::to_string(ok.size));
    const std::string mine = checksum_of_bytes(algo_, ok.data);
    if (algo_ != ChecksumAlgo::none && mine != ok.value)
      throw Error(Errc::integrity, f.remote.to_string() + ": checksum mismatch: pxferd sent " + log_safe(ok.value) +
                                       ", received " + mine);
    SinkOptions sink{opt_.overwrite, false, opt_.sync, 0, 0, opt_.partial_max_age.count()};
    sink.reserve = false;          // written in one piece right away
    sink.watch_directory = false;  // no blocks in between; the group holds many such sinks
    sink.new_directory = f.new_directory;
    const std::string name = target_name(opt_.local_root, f.local);
    auto file = std::make_unique<FileSink>(parents().target(name), name, ok.data.size(), sink);
    if (!ok.data.empty()) file->write_at(0, ok.data);
    group_.add(std::move(file));
    stored_.push_back(Stored{p, ok.data.size(), ok.value});
    if (group_.size() >= commit_group_files) settle();
  }

  // Commits the files stored since the last call and reports each (io/commit_group.hpp).
  void settle() {
    if (group_.empty()) return;
    auto outcomes = group_.commit();
    auto stored = std::move(stored_);
    stored_.clear();
    for (std::size_t k = 0; k < outcomes.size(); ++k) {
      if (outcomes[k].error) failed(stored[k].pending.index, *outcomes[k].error);
      else succeeded(stored[k].pending, stored[k].bytes, stored[k].value);
    }
  }

  void check_id(std::uint32_t id, const Pending& p) const {
    if (id != id_of(p.index))
      throw Error(Errc::protocol, "pxferd at " + link_.authority + " answered small file " + std::to_string(id) +
                                      " where " + std::to_string(id_of(p.index)) + " was next");
  }

  void succeeded(const Pending& p, std::uint64_t bytes, const std::string& value) {
    const SmallFile& f = files_[p.index];
    SmallOutcome o;
    o.kind = SmallOutcome::Kind::done;
    TransferSummary& s = o.summary;
    s.direction = f.direction;
    s.source = f.direction == Direction::put ? f.local : f.remote.to_string();
    s.destination = f.direction == Direction::put ? f.remote.to_string() : f.local;
    s.bytes = bytes;
    s.block_size = static_cast<std::uint32_t>(bytes);
    s.streams = 0;  // no data stream: the file moved inside the control connection
    s.seconds = std::chrono::duration<double>(Clock::now() - p.sent).count();
    s.checksum = algo_;
    s.checksum_value = value;
    s.protection = describe_small_protection(*link_.connection, channel_ != nullptr);
    s.identity = log_safe(link_.auth.identity);
    s.attempts = 1;
    report(p.index, std::move(o));
  }
  void failed(std::size_t index, const Error& e) { report(index, SmallOutcome{SmallOutcome::Kind::failed, {}, e}); }
  void fallback(std::size_t index) { report(index, SmallOutcome{SmallOutcome::Kind::fallback, {}, {}}); }
  void report(std::size_t index, SmallOutcome o) {
    reported_[index] = true;
    done_(index, std::move(o));
  }

  std::uint32_t flags() const {
    return (opt_.overwrite ? wire::open_overwrite : 0u) | (opt_.sync ? wire::open_sync : 0u);
  }
  static std::uint32_t id_of(std::size_t index) { return static_cast<std::uint32_t>(index); }
  const Directory& cwd() {
    if (!cwd_) cwd_.emplace(Directory::current());  // a put's sources are named as typed
    return *cwd_;
  }
  // Where a get writes: beneath the directory the user named (get -r), opened once for the run,
  // so a server's names cannot lead out of it (local_tree.hpp); else as typed.
  const Directory& target_dir() {
    if (!target_) target_.emplace(target_directory(opt_.local_root));
    return *target_;
  }
  // Its directories, each opened once for the files that follow in it.
  ParentDirectories& parents() {
    if (!parents_) parents_.emplace(target_dir());
    return *parents_;
  }

  // At most this many received files wait for their commit: each holds two descriptors.
  static constexpr std::size_t commit_group_files = 64;
  // Requests go out in writes of about this many file bytes (one run of records, net/tls_engine.hpp).
  static constexpr std::size_t send_run = 256 * 1024;

  ControlLink& link_;
  const std::vector<SmallFile>& files_;
  const ClientOptions& opt_;
  const SmallDone& done_;
  std::vector<bool>& reported_;
  const ChecksumAlgo algo_;
  std::optional<Directory> cwd_;
  std::optional<Directory> target_;
  std::optional<ParentDirectories> parents_;  // of target_
  struct Stored {
    Pending pending;
    std::uint64_t bytes = 0;
    std::string value;
  };
  CommitGroup group_;           // files received, written, not yet durable under their names
  std::vector<Stored> stored_;  // what to report of each, in the group's order
  bool answered_ = false;
  Clock::time_point progress_;  // the last request sent or answer read
  transfer::SmallChannel* channel_ = nullptr;  // link_'s small-file channel, when there is one
  std::vector<wire::Message> channel_data_;    // SMALL_DATA of the requests not yet sent
};

awaitable<void> pipeline(std::optional<ControlLink>& link, const std::vector<SmallFile>& files, const ClientOptions& options,
                         std::shared_ptr<ClientTrust> trust, const SmallDone& done, std::vector<bool>& reported) {
  if (files.empty()) co_return;
  bool reused = co_await control_to(link, files.front().remote, options.connect_timeout, trust);
  if (!(link->hello.capabilities & wire::cap_small_files)) {
    for (std::size_t i = 0; i < files.size(); ++i) {
      reported[i] = true;
      done(i, SmallOutcome{SmallOutcome::Kind::fallback, {}, {}});
    }
    co_return;
  }
  // A kept connection the server closed meanwhile (its idle timeout, a restart) fails at the first
  // exchange, before anything was answered: once more on a new one (kept_link.hpp).
  std::optional<SmallRun> run;
  auto exchange = [&]() -> awaitable<void> {
    run.emplace(*link, files, options, done, reported);
    co_await run->run();
  };
  auto untouched = [&] { return !run->answered(); };
  co_await once_more_if_stale(link, reused, files.front().remote, options.connect_timeout, exchange, untouched);
}

}  // namespace

awaitable<void> run_small_files(std::optional<ControlLink>& link, const std::vector<SmallFile>& files,
                                const ClientOptions& options, std::shared_ptr<ClientTrust> trust, const SmallDone& done) {
  std::vector<bool> reported(files.size());
  std::optional<Error> lost;
  try {
    co_await pipeline(link, files, options, trust, done, reported);
  } catch (const Error& e) {
    lost = e;
  } catch (const std::exception& e) {
    lost = Error(Errc::internal, std::string("small files: ") + e.what());
  }
  if (!lost) co_return;
  spdlog::debug("small files: the pipeline to {} ended: {}", files.front().remote.authority(), lost->what());
  // The connection is in an unknown state: every file still in flight failed with it (the caller
  // retries them one by one).
  link.reset();
  for (std::size_t i = 0; i < files.size(); ++i)
    if (!reported[i]) done(i, SmallOutcome{SmallOutcome::Kind::failed, {}, *lost});
}

}  // namespace pxfer
