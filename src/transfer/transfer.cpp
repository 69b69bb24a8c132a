#include "transfer.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>
#include <cstdio>
#include <deque>

#include <spdlog/spdlog.h>

#include "net/frame_io.hpp"
#include "net/race.hpp"
#include "pxfer/rate_meter.hpp"

namespace pxfer::transfer {

namespace asio = boost::asio;

void refresh_tcp(StreamStats& s, int fd);

// One data connection's life on a stream slot: the blocks it carries that the receiver has not
// acknowledged yet (they go back to the queue if it dies), and when it last heard from the peer.
struct Transfer::StreamRun {
  std::uint16_t index = 0;
  StreamStats& stats;
  std::mutex mutex;
  std::deque<Block> unacknowledged;
  std::atomic<Clock::rep> last_heard{Clock::now().time_since_epoch().count()};
  std::atomic<Clock::rep> last_sent{Clock::now().time_since_epoch().count()};
  std::shared_ptr<asio::steady_timer> idle;  // the sender waits on it for work; on the stream's strand

  void heard() { last_heard.store(Clock::now().time_since_epoch().count(), std::memory_order_relaxed); }
  void sent() { last_sent.store(Clock::now().time_since_epoch().count(), std::memory_order_relaxed); }
  static Clock::duration since(const std::atomic<Clock::rep>& t) {
    return Clock::now() - Clock::time_point(Clock::duration(t.load(std::memory_order_relaxed)));
  }
};

namespace {
std::chrono::milliseconds heartbeat_of(const Settings& s) {
  return std::max(std::chrono::milliseconds(50), s.stall_timeout / 4);
}
double seconds_of(std::chrono::milliseconds d) { return static_cast<double>(d.count()) / 1000.0; }
}  // namespace

Transfer::Transfer(asio::any_io_executor ex, Role role, Settings settings, std::uint64_t size)
    : role_(role), settings_(settings), planner_(size, settings.block_size), done_(ex, 1), executor_(ex) {
  for (std::uint16_t i = 0; i < settings.streams; ++i) stats_.push_back(std::make_unique<StreamStats>());
  slots_.resize(settings.streams);
}

Transfer::~Transfer() = default;

std::shared_ptr<Transfer> Transfer::sending(asio::any_io_executor ex, FileSource source, Settings settings) {
  auto t = std::shared_ptr<Transfer>(new Transfer(ex, Role::send, settings, source.size()));
  t->source_.emplace(std::move(source));
  const FileSource* src = &*t->source_;
  t->digest_ = FileDigest::create(settings.checksum, src->size(), settings.block_size,
                                  [src](std::uint64_t off, std::span<std::uint8_t> out) { src->read_at(off, out); });
  return t;
}

std::shared_ptr<Transfer> Transfer::receiving(asio::any_io_executor ex, std::unique_ptr<FileSink> sink,
                                              Settings settings) {
  auto t = std::shared_ptr<Transfer>(new Transfer(ex, Role::receive, settings, sink->size()));
  t->sink_ = std::move(sink);
  const FileSink* dst = t->sink_.get();
  t->digest_ = FileDigest::create(settings.checksum, dst->size(), settings.block_size,
                                  [dst](std::uint64_t off, std::span<std::uint8_t> out) { dst->read_at(off, out); });
  t->resumed_.assign(t->planner_.block_count(), false);
  if (t->sink_->journal()) t->verify_resumed_blocks();
  return t;
}

// A block counts as kept only if its bytes on disk still have the Adler-32 the journal recorded
// (a crash may have lost data the journal already listed); the read also feeds the file digest.
void Transfer::verify_resumed_blocks() {
  ResumeJournal& journal = *sink_->journal();
  if (journal.recorded_count() == 0) return;
  std::vector<std::uint8_t> buffer(largest_block());
  for (std::size_t i = 0; i < planner_.block_count(); ++i) {
    auto recorded = journal.recorded(i);
    if (!recorded) continue;
    Block b = planner_.block_at(i);
    std::span<std::uint8_t> data(buffer.data(), b.length);
    sink_->read_at(b.offset, data);
    if (adler32_of(data) != *recorded) {
      journal.forget(i);
      continue;
    }
    digest_->add_block(b.offset, data);
    planner_.mark_done(b.offset);
    resumed_[i] = true;
    resumed_bytes_ += b.length;
  }
}

std::vector<wire::Have> Transfer::have_frames() const { return wire::split_have(resumed_); }

bool Transfer::apply_have(const wire::Have& have) {
  std::vector<std::uint8_t> buffer;
  for (std::size_t bit = 0; bit < have.bitmap.size() * 8; ++bit) {
    if (!(have.bitmap[bit / 8] & (1u << (bit % 8)))) continue;
    std::size_t index = have.first_block + bit;
    if (index >= planner_.block_count()) return false;
    Block b = planner_.block_at(index);
    if (!planner_.mark_done(b.offset)) continue;
    // The whole-file checksum still covers the blocks not sent: read them from the source.
    buffer.resize(b.length);
    source_->read_at(b.offset, buffer);
    digest_->add_block(b.offset, buffer);
    resumed_bytes_ += b.length;
  }
  return true;
}

awaitable<void> Transfer::exchange_have(Connection& control) {
  if (role_ == Role::receive) {
    for (auto& frame : have_frames()) {
      wire::Message have = std::move(frame);
      co_await net::send_message(control, have);
    }
    co_return;
  }
  for (;;) {
    wire::Message message = co_await net::read_message(control);
    auto have = net::expect<wire::Have>(std::move(message), control.peer());
    if (!apply_have(have))
      throw Error(Errc::protocol, "HAVE names blocks beyond the end of the file, from " + control.peer());
    if (have.more == 0) break;
  }
  start_sending();
}

bool Transfer::nothing_to_move() const { return planner_.all_acknowledged(); }

void Transfer::start_sending() {
  ready_ = true;
  check_complete();
  wake_idle_streams();
}

std::uint64_t Transfer::bytes_moved() const {
  std::uint64_t total = 0;
  for (const auto& s : stats_) total += s->bytes.load(std::memory_order_relaxed);
  return total;
}

bool Transfer::claim_stream(std::uint16_t index, std::shared_ptr<Connection> conn) {
  std::shared_ptr<Connection> replaced;
  std::string broke;
  {
    std::lock_guard lock(mutex_);
    if (index >= slots_.size() || error_ || done_signalled_) return false;
    replaced = std::exchange(slots_[index].connection, conn);
    slots_[index].ever_attached = true;
    broke = std::exchange(slots_[index].broke, std::string());
    connections_.push_back(conn);
  }
  // The peer reconnected this stream: the old connection is dead to it, whatever we thought.
  if (replaced) replaced->close();
  // Told once the replacement stands: a stream lost as the whole transfer fails is no news.
  if (!broke.empty()) tell_stream_event("stream " + std::to_string(index) + " reconnected after: " + broke);
  return true;
}

void Transfer::release_slot(std::uint16_t index, const Connection& conn) {
  {
    std::lock_guard lock(mutex_);
    if (slots_[index].connection.get() == &conn) slots_[index].connection.reset();
  }
  check_complete();
}

bool Transfer::over() const {
  std::lock_guard lock(mutex_);
  return error_.has_value() || done_signalled_;
}

// The data phase is over when every block is where it belongs and no stream is still moving.
void Transfer::check_complete() {
  if (role_ == Role::send && !ready_) return;
  if (!planner_.all_acknowledged()) return;
  {
    std::lock_guard lock(mutex_);
    for (const auto& slot : slots_)
      if (slot.connection) return;
  }
  signal_done();
  cancel_attach_deadline();
}

void Transfer::give_up_stream(std::uint16_t index, const Error& why) {
  std::size_t given_up;
  {
    std::lock_guard lock(mutex_);
    given_up = ++given_up_;
  }
  // Only news when it ends the transfer: a slot refused because the transfer just finished is not.
  spdlog::debug("stream {} given up: {}", index, why.what());
  if (given_up == slots_.size())
    fail(Error(Errc::network, "every data stream failed; the last one: " + std::string(why.what())));
}

void Transfer::tell_stream_event(const std::string& text) {
  if (stream_event_listener_) stream_event_listener_(text);
}

void Transfer::wake_idle_streams() {
  std::vector<std::shared_ptr<asio::steady_timer>> timers;
  {
    std::lock_guard lock(mutex_);
    std::erase_if(idle_timers_, [](const auto& w) { return w.expired(); });
    for (auto& w : idle_timers_)
      if (auto t = w.lock()) timers.push_back(std::move(t));
  }
  // Each timer lives on its stream's strand: cancel it there.
  for (auto& t : timers) asio::post(t->get_executor(), [t] { t->cancel(); });
}

void Transfer::fail(const Error& error) {
  std::vector<std::shared_ptr<Connection>> to_close;
  {
    std::lock_guard lock(mutex_);
    if (error_) return;
    error_ = error;
    for (auto& w : connections_)
      if (auto c = w.lock()) to_close.push_back(std::move(c));
  }
  for (auto& c : to_close) c->close();
  // What a later attempt can build on stays (hidden, with its journal); a file that failed its
  // checksum, or a destination that must not be written, does not.
  if (sink_) {
    Errc code = error.code();
    sink_->abandon(keeps_partial(code));
  }
  signal_done();
  cancel_attach_deadline();
  wake_idle_streams();
}

void Transfer::cancel_attach_deadline() {
  if (auto timer = attach_timer_) asio::post(executor_, [timer] { timer->cancel(); });
}

void Transfer::signal_done() {
  std::lock_guard lock(mutex_);
  if (done_signalled_) return;
  done_signalled_ = true;
  done_.try_send(boost::system::error_code{});
}

void Transfer::arm_attach_deadline() {
  auto self = shared_from_this();
  attach_timer_ = std::make_shared<asio::steady_timer>(executor_);
  asio::co_spawn(
      executor_,
      [self, timer = attach_timer_]() -> awaitable<void> {
        const auto limit = self->settings_.attach_timeout;
        auto last_moving = Clock::now();
        for (;;) {
          timer->expires_after(std::min<std::chrono::milliseconds>(limit, std::chrono::milliseconds(1000)));
          auto [ec] = co_await timer->async_wait(asio::as_tuple(asio::use_awaitable));
          if (ec || self->over()) co_return;  // cancelled: the transfer ended first
          std::size_t attached = 0, moving = 0;
          {
            std::lock_guard lock(self->mutex_);
            for (const auto& slot : self->slots_) {
              attached += slot.ever_attached;
              moving += slot.connection != nullptr;
            }
          }
          if (moving > 0) last_moving = Clock::now();
          if (Clock::now() - last_moving < limit) continue;
          if (attached < self->slots_.size())
            self->fail(Error(Errc::network, "only " + std::to_string(attached) + " of " +
                                                std::to_string(self->slots_.size()) +
                                                " data streams connected in time (is a firewall dropping them?)"));
          else
            self->fail(Error(Errc::network, "no data stream for " + std::to_string(limit.count() / 1000) +
                                                " s: the client went away or the path is down"));
          co_return;
        }
      },
      asio::detached);
}

awaitable<void> Transfer::run_stream(std::shared_ptr<Connection> conn, std::uint16_t index) {
  StreamRun run{index, *stats_[index]};
  run.idle = std::make_shared<asio::steady_timer>(co_await asio::this_coro::executor);
  {
    std::lock_guard lock(mutex_);
    if (error_) throw *error_;
    idle_timers_.push_back(run.idle);
  }
  const int fd = conn->socket().native_handle();
  run.stats.fd.store(fd);
  std::optional<Error> failure;
  try {
    if (role_ == Role::send)
      co_await net::first_of(net::both(send_blocks(*conn, run), receive_acks(*conn, run)), watch_progress(*conn, run));
    else
      co_await net::first_of(receive_blocks(*conn, run), watch_progress(*conn, run));
  } catch (const Error& e) {
    failure = e;
  } catch (const std::exception& e) {
    failure = Error(Errc::internal, std::string("data stream failed: ") + e.what());
  }
  {
    std::lock_guard lock(run.stats.tcp_mutex);
    if (!failure) {
      // Report the buffers as they ended: with autotuning the kernel grew them during the transfer.
      run.stats.local = read_buffers(fd, settings_.tuning.window);
      refresh_tcp(run.stats, fd);
    }
    int expected = fd;
    run.stats.fd.compare_exchange_strong(expected, -1);
  }
  if (failure) {
    conn->close();
    // What this connection carried unacknowledged goes to the streams still alive.
    std::deque<Block> orphans;
    {
      std::lock_guard lock(run.mutex);
      orphans.swap(run.unacknowledged);
    }
    for (const auto& b : orphans) planner_.requeue(b);
    release_slot(index, *conn);
    std::optional<Error> first;
    {
      std::lock_guard lock(mutex_);
      first = error_;
    }
    if (first) throw *first;  // report the root cause, not the echo of our own abort
    if (!retryable(failure->code(), RetryScope::connection)) {
      fail(*failure);
      throw *failure;
    }
    recoveries_ += 1;
    {
      std::lock_guard lock(mutex_);
      slots_[index].broke = std::string(failure->what()) +
                            (orphans.empty() ? "" : " (" + std::to_string(orphans.size()) + " blocks went to the other streams)");
    }
    spdlog::debug("stream {} lost: {}", index, failure->what());
    wake_idle_streams();
    throw *failure;
  }
  release_slot(index, *conn);
}

// g++ 12 may destroy temporaries that live across a co_await twice, so every message sent from a
// coroutine is a named object first.
const wire::Message end_message = wire::End{};
const wire::Message ping_message = wire::Ping{0};

// The unit of the read -> hash -> send (and receive -> hash -> write) pipeline inside a block:
// small enough to stay in the L2 cache between steps, large enough to keep system calls few.
constexpr std::uint32_t pipeline_chunk = 256 * 1024;

// Takes blocks from the shared queue until every block is acknowledged. A stream with nothing
// to send stays open (a block another stream loses comes back to the queue), says it is alive
// with a PING now and then, and sleeps until woken.
awaitable<void> Transfer::send_blocks(Connection& conn, StreamRun& run) {
  std::vector<std::uint8_t> buffer(largest_block());
  std::optional<BlockCompressor> compressor;
  if (settings_.compression.mode != CompressMode::none) compressor.emplace(settings_.compression);
  const auto heartbeat = heartbeat_of(settings_);
  for (;;) {
    if (over() && !planner_.all_acknowledged()) co_return;  // failed: run_stream reports why
    std::optional<Block> block;
    if (ready_) block = planner_.next();
    if (block) {
      {
        std::lock_guard lock(run.mutex);
        run.unacknowledged.push_back(*block);
      }
      if (compressor)
        co_await send_compressible(conn, run, *block, buffer, *compressor);
      else
        co_await send_block(conn, run, *block, buffer);
      run.sent();
      continue;
    }
    if (ready_ && planner_.all_acknowledged()) break;
    if (StreamRun::since(run.last_sent) >= heartbeat) {
      co_await net::send_message(conn, ping_message);
      run.sent();
    }
    run.idle->expires_after(heartbeat);
    co_await run.idle->async_wait(asio::as_tuple(asio::use_awaitable));  // woken early by cancel
  }
  co_await net::send_message(conn, end_message);
}

awaitable<void> Transfer::send_block(Connection& conn, StreamRun& run, Block block, std::vector<std::uint8_t>& buffer) {
  wire::BlockHeader header{block.offset, block.length, 0, block.length};
  auto header_bytes = wire::encode_block_header(header);
  co_await conn.write_all(header_bytes);
  // Read, hash and send chunk by chunk: each chunk is hashed and copied into the socket while it
  // is still in the CPU cache (a whole 4 MiB block would not fit).
  BlockDigest digest{block.offset};
  for (std::uint32_t done = 0; done < block.length;) {
    std::uint32_t n = std::min(pipeline_chunk, block.length - done);
    std::span<std::uint8_t> chunk(buffer.data() + done, n);
    source_->read_at(block.offset + done, chunk);
    digest_->update(digest, chunk);
    co_await conn.write_all(chunk, &run.stats.bytes);
    done += n;
  }
  digest_->complete(digest, std::span(buffer.data(), block.length));
  run.stats.blocks.fetch_add(1, std::memory_order_relaxed);
  wire_bytes_ += block.length;
}

// With compression the whole block must be read before it can be sent: read and hash it chunk
// by chunk, compress it, and send the smaller of the two forms.
awaitable<void> Transfer::send_compressible(Connection& conn, StreamRun& run, Block block,
                                            std::vector<std::uint8_t>& buffer, BlockCompressor& compressor) {
  std::span<std::uint8_t> data(buffer.data(), block.length);
  BlockDigest digest{block.offset};
  for (std::uint32_t done = 0; done < block.length;) {
    std::uint32_t n = std::min(pipeline_chunk, block.length - done);
    source_->read_at(block.offset + done, data.subspan(done, n));
    digest_->update(digest, data.subspan(done, n));
    done += n;
  }
  digest_->complete(digest, data);
  std::span<const std::uint8_t> packed = compressor.compress(data);
  std::span<const std::uint8_t> payload = packed.empty() ? std::span<const std::uint8_t>(data) : packed;
  wire::BlockHeader header{block.offset, block.length, packed.empty() ? 0u : std::uint32_t{wire::block_compressed_zstd},
                           static_cast<std::uint32_t>(payload.size())};
  auto header_bytes = wire::encode_block_header(header);
  co_await conn.write_all(header_bytes);
  auto start = Clock::now();
  co_await conn.write_all(payload, packed.empty() ? &run.stats.bytes : nullptr);
  compressor.sent(payload.size(), std::chrono::duration<double>(Clock::now() - start).count());
  if (!packed.empty()) run.stats.bytes.fetch_add(block.length, std::memory_order_relaxed);
  run.stats.blocks.fetch_add(1, std::memory_order_relaxed);
  wire_bytes_ += payload.size();
}

awaitable<void> Transfer::receive_acks(Connection& conn, StreamRun& run) {
  for (;;) {
    wire::Message message = co_await net::read_message(conn);
    run.heard();
    if (auto* ack = std::get_if<wire::Ack>(&message)) {
      bool ours;
      {
        std::lock_guard lock(run.mutex);
        auto it = std::find_if(run.unacknowledged.begin(), run.unacknowledged.end(),
                               [&](const Block& b) { return b.offset == ack->offset; });
        ours = it != run.unacknowledged.end();
        if (ours) run.unacknowledged.erase(it);
      }
      if (!ours || !planner_.acknowledge(ack->offset))
        throw Error(Errc::protocol, "acknowledgement for a block that was not sent (offset " +
                                        std::to_string(ack->offset) + ") from " + conn.peer());
      if (planner_.all_acknowledged()) {
        check_complete();
        wake_idle_streams();  // every stream may now say END
      }
    } else if (std::holds_alternative<wire::End>(message)) {
      co_return;
    } else if (!std::holds_alternative<wire::Ping>(message)) {
      net::expect<wire::Ack>(std::move(message), conn.peer());
    }
  }
}

// Fails the stream when the peer has been silent for the stall timeout; on the receiving side
// also sends the heartbeats that keep a sender from taking a receiver busy with a slow disk for
// a dead one.
awaitable<void> Transfer::watch_progress(Connection& conn, StreamRun& run) {
  const auto heartbeat = heartbeat_of(settings_);
  asio::steady_timer timer(co_await asio::this_coro::executor);
  for (;;) {
    timer.expires_after(heartbeat);
    co_await timer.async_wait(asio::use_awaitable);
    if (StreamRun::since(run.last_heard) > settings_.stall_timeout) {
      char text[64];
      std::snprintf(text, sizeof text, "%.1f", seconds_of(settings_.stall_timeout));
      throw Error(Errc::network, "stream " + std::to_string(run.index) + " stalled: nothing from " + conn.peer() +
                                     " for " + text + " s");
    }
    if (role_ == Role::receive && StreamRun::since(run.last_sent) >= heartbeat) {
      co_await net::send_message(conn, ping_message);
      run.sent();
    }
  }
}

awaitable<void> Transfer::receive_blocks(Connection& conn, StreamRun& run) {
  StreamStats& stats = run.stats;
  std::vector<std::uint8_t> buffer(largest_block());
  std::vector<std::uint8_t> packed;
  std::optional<BlockDecompressor> decompressor;
  std::array<std::uint8_t, wire::block_header_size> block_bytes{};
  // The journal keeps each block's Adler-32; the adler32 digest computes it anyway.
  const bool journal_adler = sink_->resuming() && settings_.checksum != ChecksumAlgo::adler32;
  for (;;) {
    wire::FrameHeader frame = co_await net::read_header(conn);
    run.heard();
    if (frame.type != wire::FrameType::block) {
      wire::Message message = co_await net::read_payload(conn, frame);
      if (std::holds_alternative<wire::Ping>(message)) continue;
      net::expect<wire::End>(std::move(message), conn.peer());
      co_await net::send_message(conn, end_message);
      co_return;
    }
    if (frame.length < wire::block_header_size) throw Error(Errc::protocol, "truncated BLOCK frame from " + conn.peer());
    co_await conn.read_exact(block_bytes);
    wire::BlockHeader header;
    auto status = wire::decode_block_header(frame, block_bytes, header);
    if (status != wire::DecodeStatus::ok)
      throw Error(Errc::protocol, std::string("bad BLOCK frame from ") + conn.peer() + ": " + wire::to_string(status));
    if (!planner_.is_block(Block{header.offset, header.raw_length}))
      throw Error(Errc::protocol, "block at offset " + std::to_string(header.offset) + " of " +
                                      std::to_string(header.raw_length) + " bytes does not fit the file's block plan");
    if (header.flags & wire::block_compressed_zstd) {
      if (!decompressor) decompressor.emplace();
      packed.resize(header.wire_length);  // < raw_length <= block size: checked by the decoder
      co_await conn.read_exact(packed);
      run.heard();
      std::span<std::uint8_t> data(buffer.data(), header.raw_length);
      decompressor->decompress(packed, data);
      stats.bytes.fetch_add(header.raw_length, std::memory_order_relaxed);
      sink_->write_at(header.offset, data);
      digest_->add_block(header.offset, data);
      std::uint32_t adler = sink_->resuming() ? adler32_of(data) : 0;
      co_await finish_received_block(conn, run, header, adler);
      continue;
    }
    // Hash each piece as it arrives and write it out in pipeline_chunk pieces, while it is hot.
    std::span<std::uint8_t> data(buffer.data(), header.raw_length);
    BlockDigest digest{header.offset};
    std::uint32_t adler = 1;
    std::size_t received = 0, written = 0;
    while (received < data.size()) {
      std::size_t n = co_await conn.read_some(data.subspan(received, std::min<std::size_t>(data.size() - received, pipeline_chunk)));
      run.heard();
      stats.bytes.fetch_add(n, std::memory_order_relaxed);
      digest_->update(digest, data.subspan(received, n));
      if (journal_adler) adler = adler32_of(data.subspan(received, n), adler);
      received += n;
      if (received - written >= pipeline_chunk || received == data.size()) {
        sink_->write_at(header.offset + written, data.subspan(written, received - written));
        written = received;
      }
    }
    digest_->complete(digest, data);
    co_await finish_received_block(conn, run, header, journal_adler ? adler : digest.running);
  }
}

// The block is written and hashed: record it and acknowledge it. A block that arrives a second
// time (its first ACK died with a broken stream) is acknowledged again: same bytes, same place.
awaitable<void> Transfer::finish_received_block(Connection& conn, StreamRun& run, const wire::BlockHeader& header,
                                                std::uint32_t adler) {
  sink_->block_written(static_cast<std::size_t>(header.offset / settings_.block_size), adler);
  bool first_time = planner_.mark_done(header.offset);
  run.stats.blocks.fetch_add(1, std::memory_order_relaxed);
  wire_bytes_ += header.wire_length;
  wire::Message ack = wire::Ack{header.offset, header.raw_length};
  co_await net::send_message(conn, ack);
  run.sent();
  if (first_time && planner_.all_acknowledged()) check_complete();
}

awaitable<void> Transfer::wait_streams() {
  check_complete();  // nothing to move (an empty file, or all resumed): done already
  co_await done_.async_receive(asio::use_awaitable);
  std::lock_guard lock(mutex_);
  if (error_) throw *error_;
}

// Caller holds s.tcp_mutex.
void refresh_tcp(StreamStats& s, int fd) {
  TcpSnapshot tcp;
  if (!read_tcp_info(fd, tcp)) return;
  auto& f = s.last_tcp;
  f.cwnd = tcp.cwnd_segments;
  f.mss = tcp.mss;
  f.rtt_us = tcp.rtt_us;
  f.retransmits = tcp.total_retrans;
  f.unsent = tcp.unsent_bytes;
  f.sndbuf = read_buffers(fd).sndbuf;
  f.delivery_rate = tcp.delivery_rate;
}

std::vector<wire::StreamFigures> Transfer::local_figures() {
  std::vector<wire::StreamFigures> out;
  for (std::size_t i = 0; i < stats_.size(); ++i) {
    StreamStats& s = *stats_[i];
    std::lock_guard lock(s.tcp_mutex);
    if (int fd = s.fd.load(); fd >= 0) refresh_tcp(s, fd);
    wire::StreamFigures f = s.last_tcp;
    f.stream = static_cast<std::uint16_t>(i);
    f.bytes = s.bytes.load(std::memory_order_relaxed);
    out.push_back(f);
  }
  return out;
}

awaitable<void> Transfer::report_stats(std::shared_ptr<Connection> control) {
  asio::steady_timer timer(co_await asio::this_coro::executor);
  for (;;) {
    timer.expires_after(settings_.stats_interval);
    co_await timer.async_wait(asio::use_awaitable);
    wire::Message stats = wire::Stats{local_figures()};
    co_await net::send_message(*control, stats);  // the write gate keeps frames whole
  }
}

awaitable<std::string> Transfer::commit_exchange(Connection& control) {
  // The control connection is quiet while the blocks move: the sender says it is alive with a
  // PING every heartbeat, and the receiver gives up on a sender (or a path) silent for the stall
  // timeout, so a control connection that a middlebox stopped forwarding cannot hang it.
  std::optional<std::string> checksum;
  if (role_ == Role::send)
    checksum = co_await net::first_of(send_control(control), keep_control_alive(control));
  else
    checksum = co_await net::first_of(net::both(commit_as_receiver(control), wait_streams()), keep_control_alive(control));
  co_return checksum.value_or("");
}

awaitable<std::string> Transfer::run_control(std::shared_ptr<Connection> control, bool streams_on_control) {
  if (!streams_on_control) co_return co_await commit_exchange(*control);
  streams_on_control_ = true;
  if (!nothing_to_move()) {
    if (settings_.streams != 1 || !claim_stream(0, control))
      throw Error(Errc::protocol, "a transfer on the control connection has exactly one stream");
    co_await run_stream(control, 0);
  }
  co_return co_await commit_exchange(*control);
}

awaitable<std::string> Transfer::send_control(Connection& control) {
  // The receiver says nothing on the control connection before COMMIT unless it fails (disk
  // full, cannot create the file): listen for that while the blocks move, so a failure there
  // ends the transfer at once instead of after the streams time out.
  std::shared_ptr<Connection> shared_control = control.shared_from_this();
  if (streams_on_control_)
    co_await wait_streams();  // already over: a read left pending on the control connection would eat RESULT
  else if (settings_.stats_interval.count() > 0)
    co_await net::first_of(wait_streams(), net::both(watch_peer(control), report_stats(shared_control)));
  else
    co_await net::first_of(wait_streams(), watch_peer(control));
  if (settings_.stats_interval.count() > 0) {
    wire::Message last = wire::Stats{local_figures()};  // final figures, so totals are complete
    co_await net::send_message(control, last);
  }
  co_return co_await commit_as_sender(control);
}

awaitable<void> Transfer::keep_control_alive(Connection& control) {
  const auto heartbeat = heartbeat_of(settings_);
  asio::steady_timer timer(co_await asio::this_coro::executor);
  for (;;) {
    timer.expires_after(heartbeat);
    co_await timer.async_wait(asio::use_awaitable);
    if (role_ == Role::send) {
      co_await net::send_message(control, ping_message);
    } else if (StreamRun::since(control_heard_) > settings_.stall_timeout) {
      char text[64];
      std::snprintf(text, sizeof text, "%.1f", seconds_of(settings_.stall_timeout));
      throw Error(Errc::network, "the control connection to " + control.peer() + " went silent for " + text +
                                     " s (no heartbeat): the peer or the path is gone");
    }
  }
}

// A control message, heartbeats skipped.
awaitable<wire::Message> Transfer::read_control(Connection& control) {
  for (;;) {
    wire::Message message = co_await net::read_message(control);
    control_heard_.store(Clock::now().time_since_epoch().count(), std::memory_order_relaxed);
    if (!std::holds_alternative<wire::Ping>(message) && !std::holds_alternative<wire::Pong>(message)) co_return message;
  }
}

awaitable<void> Transfer::watch_peer(Connection& control) {
  wire::Message message = co_await net::read_message(control);
  auto error = Error(Errc::protocol, "unexpected message on the control connection from " + control.peer());
  if (auto* e = std::get_if<wire::ErrorMsg>(&message)) error = Error(errc_from_wire(e->code), e->message);
  fail(error);
  throw error;
}

awaitable<std::string> Transfer::commit_as_sender(Connection& control) {
  if (!planner_.all_acknowledged()) throw Error(Errc::protocol, "streams ended before every block was acknowledged");
  source_->check_unchanged();
  std::string checksum = digest_->finish();
  wire::Message commit = wire::Commit{file_size(), static_cast<std::uint8_t>(settings_.checksum), checksum};
  co_await net::send_message(control, commit);
  // The receiver flushes the file and checks it before it answers: allow it some stall periods.
  auto reply = co_await net::read_message_within(control, settings_.stall_timeout * 4);
  if (!reply)
    throw Error(Errc::network, "no answer to COMMIT from " + control.peer() + " within " +
                                   std::to_string(settings_.stall_timeout.count() * 4 / 1000) + " s");
  auto result = net::expect<wire::Result>(std::move(*reply), control.peer());
  if (result.code != 0) throw Error(errc_from_wire(result.code), result.message);
  if (result.value != checksum)
    throw Error(Errc::integrity, "the receiver confirmed a different checksum (" + result.value + " vs " + checksum + ")");
  co_return checksum;
}

awaitable<std::string> Transfer::commit_as_receiver(Connection& control) {
  wire::Message received = co_await read_control(control);
  // The sender's per-stream figures may come first, as many as there were intervals.
  while (auto* stats = std::get_if<wire::Stats>(&received)) {
    if (peer_stats_listener_) peer_stats_listener_(std::move(*stats));
    received = co_await read_control(control);
  }
  auto commit = net::expect<wire::Commit>(std::move(received), control.peer());
  auto refuse = [&](Error error) -> awaitable<void> {
    wire::Message verdict = wire::Result{static_cast<std::uint16_t>(error.code()), "", error.what()};
    co_await net::send_message(control, verdict);
    throw error;
  };
  std::optional<Error> problem;
  std::string local;
  if (commit.bytes != file_size() || !planner_.all_acknowledged()) {
    problem = Error(Errc::protocol, "the sender committed before every block arrived");
  } else if (commit.checksum != static_cast<std::uint8_t>(settings_.checksum)) {
    problem = Error(Errc::protocol, "the sender used a different checksum algorithm");
  } else if (local = digest_->finish(); local != commit.value) {
    problem = Error(Errc::integrity, sink_->path() + ": checksum mismatch: sender " +
                                         std::string(checksum_name(settings_.checksum)) + " " + commit.value +
                                         ", receiver " + local + "; the file was not kept, rerun the transfer");
  } else {
    try {
      sink_->commit();
    } catch (const Error& e) {
      problem = e;  // no co_await inside a handler: carried out
    }
  }
  if (problem) co_await refuse(*problem);
  wire::Message verdict = wire::Result{0, local, "ok"};
  co_await net::send_message(control, verdict);
  co_return local;
}

}  // namespace pxfer::transfer
