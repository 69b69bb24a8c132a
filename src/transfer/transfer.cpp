#include "transfer.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "net/frame_io.hpp"
#include "net/race.hpp"
#include "pxfer/rate_meter.hpp"

namespace pxfer::transfer {

namespace asio = boost::asio;

void refresh_tcp(StreamStats& s, int fd);

Transfer::Transfer(asio::any_io_executor ex, Role role, Settings settings, std::uint64_t size)
    : role_(role), settings_(settings), planner_(size, settings.block_size), done_(ex, 1), executor_(ex) {
  for (std::uint16_t i = 0; i < settings.streams; ++i) stats_.push_back(std::make_unique<StreamStats>());
  claimed_.assign(settings.streams, false);
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
  return t;
}

std::uint64_t Transfer::bytes_moved() const {
  std::uint64_t total = 0;
  for (const auto& s : stats_) total += s->bytes.load(std::memory_order_relaxed);
  return total;
}

bool Transfer::claim_stream(std::uint16_t index) {
  std::lock_guard lock(mutex_);
  if (index >= claimed_.size() || claimed_[index] || error_) return false;
  claimed_[index] = true;
  return true;
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
  if (sink_) sink_->abort();
  signal_done();
  cancel_attach_deadline();
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

void Transfer::stream_finished() {
  bool all;
  {
    std::lock_guard lock(mutex_);
    all = ++finished_ == stats_.size();
  }
  if (all) {
    signal_done();
    cancel_attach_deadline();
  }
}

void Transfer::arm_attach_deadline() {
  auto self = shared_from_this();
  attach_timer_ = std::make_shared<asio::steady_timer>(executor_, settings_.attach_timeout);
  asio::co_spawn(
      executor_,
      [self, timer = attach_timer_]() -> awaitable<void> {
        auto [ec] = co_await timer->async_wait(asio::as_tuple(asio::use_awaitable));
        if (ec) co_return;  // cancelled: the transfer ended first
        std::size_t attached;
        {
          std::lock_guard lock(self->mutex_);
          attached = static_cast<std::size_t>(std::count(self->claimed_.begin(), self->claimed_.end(), true));
        }
        if (attached < self->stats_.size())
          self->fail(Error(Errc::network, "only " + std::to_string(attached) + " of " +
                                              std::to_string(self->stats_.size()) +
                                              " data streams connected in time (is a firewall dropping them?)"));
      },
      asio::detached);
}

awaitable<void> Transfer::run_stream(std::shared_ptr<Connection> conn, std::uint16_t index) {
  StreamStats& stats = *stats_[index];
  {
    std::lock_guard lock(mutex_);
    if (error_) throw *error_;
    connections_.push_back(conn);
  }
  stats.fd.store(conn->socket().native_handle());
  std::optional<Error> failure;
  try {
    if (role_ == Role::send)
      co_await net::both(send_blocks(*conn, stats), receive_acks(*conn));
    else
      co_await receive_blocks(*conn, stats);
  } catch (const Error& e) {
    failure = e;
  } catch (const std::exception& e) {
    failure = Error(Errc::internal, std::string("data stream failed: ") + e.what());
  }
  if (failure) {
    const Error& e = *failure;
    stats.fd.store(-1);
    std::optional<Error> first;
    {
      std::lock_guard lock(mutex_);
      first = error_;
    }
    fail(e);
    throw first ? *first : e;  // report the root cause, not the echo of our own abort
  }
  // Report the buffers as they ended: with autotuning the kernel grew them during the transfer.
  stats.local = read_buffers(conn->socket().native_handle(), settings_.tuning.window);
  {
    std::lock_guard lock(stats.tcp_mutex);
    refresh_tcp(stats, conn->socket().native_handle());
    stats.fd.store(-1);
  }
  stream_finished();
}

// g++ 12 may destroy temporaries that live across a co_await twice, so every message sent from a
// coroutine is a named object first.
const wire::Message end_message = wire::End{};

// The unit of the read -> hash -> send (and receive -> hash -> write) pipeline inside a block:
// small enough to stay in the L2 cache between steps, large enough to keep system calls few.
constexpr std::uint32_t pipeline_chunk = 256 * 1024;

awaitable<void> Transfer::send_blocks(Connection& conn, StreamStats& stats) {
  std::vector<std::uint8_t> buffer(settings_.block_size);
  std::optional<BlockCompressor> compressor;
  if (settings_.compression.mode != CompressMode::none) compressor.emplace(settings_.compression);
  while (auto block = planner_.next()) {
    if (compressor) {
      co_await send_compressible(conn, stats, *block, buffer, *compressor);
      continue;
    }
    wire::BlockHeader header{block->offset, block->length, 0, block->length};
    auto header_bytes = wire::encode_block_header(header);
    co_await conn.write_all(header_bytes);
    // Read, hash and send chunk by chunk: each chunk is hashed and copied into the socket while it
    // is still in the CPU cache (a whole 4 MiB block would not fit).
    BlockDigest digest{block->offset};
    for (std::uint32_t done = 0; done < block->length;) {
      std::uint32_t n = std::min(pipeline_chunk, block->length - done);
      std::span<std::uint8_t> chunk(buffer.data() + done, n);
      source_->read_at(block->offset + done, chunk);
      digest_->update(digest, chunk);
      co_await conn.write_all(chunk, &stats.bytes);
      done += n;
    }
    digest_->complete(digest, std::span(buffer.data(), block->length));
    stats.blocks.fetch_add(1, std::memory_order_relaxed);
    wire_bytes_ += block->length;
    raw_bytes_ += block->length;
  }
  co_await net::send_message(conn, end_message);
}

// With compression the whole block must be read before it can be sent: read and hash it chunk
// by chunk, compress it, and send the smaller of the two forms.
awaitable<void> Transfer::send_compressible(Connection& conn, StreamStats& stats, Block block,
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
  co_await conn.write_all(payload, packed.empty() ? &stats.bytes : nullptr);
  compressor.sent(payload.size(), std::chrono::duration<double>(Clock::now() - start).count());
  if (!packed.empty()) stats.bytes.fetch_add(block.length, std::memory_order_relaxed);
  stats.blocks.fetch_add(1, std::memory_order_relaxed);
  wire_bytes_ += payload.size();
  raw_bytes_ += block.length;
}

awaitable<void> Transfer::receive_acks(Connection& conn) {
  for (;;) {
    wire::Message message = co_await net::read_message(conn);
    if (auto* ack = std::get_if<wire::Ack>(&message)) {
      if (!planner_.acknowledge(ack->offset))
        throw Error(Errc::protocol, "acknowledgement for a block that was not sent (offset " +
                                        std::to_string(ack->offset) + ") from " + conn.peer());
    } else if (std::holds_alternative<wire::End>(message)) {
      co_return;
    } else {
      net::expect<wire::Ack>(std::move(message), conn.peer());
    }
  }
}

awaitable<void> Transfer::receive_blocks(Connection& conn, StreamStats& stats) {
  std::vector<std::uint8_t> buffer(settings_.block_size);
  std::vector<std::uint8_t> packed;
  std::optional<BlockDecompressor> decompressor;
  std::array<std::uint8_t, wire::block_header_size> block_bytes{};
  for (;;) {
    wire::FrameHeader frame = co_await net::read_header(conn);
    if (frame.type != wire::FrameType::block) {
      wire::Message message = co_await net::read_payload(conn, frame);
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
      std::span<std::uint8_t> data(buffer.data(), header.raw_length);
      decompressor->decompress(packed, data);
      stats.bytes.fetch_add(header.raw_length, std::memory_order_relaxed);
      sink_->write_at(header.offset, data);
      digest_->add_block(header.offset, data);
      co_await finish_received_block(conn, stats, header);
      continue;
    }
    // Hash each piece as it arrives and write it out in pipeline_chunk pieces, while it is hot.
    std::span<std::uint8_t> data(buffer.data(), header.raw_length);
    BlockDigest digest{header.offset};
    std::size_t received = 0, written = 0;
    while (received < data.size()) {
      std::size_t n = co_await conn.read_some(data.subspan(received, std::min<std::size_t>(data.size() - received, pipeline_chunk)));
      stats.bytes.fetch_add(n, std::memory_order_relaxed);
      digest_->update(digest, data.subspan(received, n));
      received += n;
      if (received - written >= pipeline_chunk || received == data.size()) {
        sink_->write_at(header.offset + written, data.subspan(written, received - written));
        written = received;
      }
    }
    digest_->complete(digest, data);
    co_await finish_received_block(conn, stats, header);
  }
}

// The block is written and hashed: record it and acknowledge it.
awaitable<void> Transfer::finish_received_block(Connection& conn, StreamStats& stats, const wire::BlockHeader& header) {
  if (!planner_.mark_done(header.offset))
    throw Error(Errc::protocol, "block at offset " + std::to_string(header.offset) + " received twice");
  stats.blocks.fetch_add(1, std::memory_order_relaxed);
  wire_bytes_ += header.wire_length;
  raw_bytes_ += header.raw_length;
  wire::Message ack = wire::Ack{header.offset, header.raw_length};
  co_await net::send_message(conn, ack);
}

awaitable<void> Transfer::wait_streams() {
  {
    std::lock_guard lock(mutex_);
    // Nothing to move: the streams still attach (the peer opens them) but completion is certain.
    if (finished_ == stats_.size() && !error_) co_return;
  }
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

awaitable<std::string> Transfer::run_control(Connection& control) {
  if (role_ == Role::send) {
    // The receiver says nothing on the control connection before COMMIT unless it fails (disk
    // full, cannot create the file): listen for that while the blocks move, so a failure there
    // ends the transfer at once instead of after the streams time out.
    std::shared_ptr<Connection> shared_control = control.shared_from_this();
    if (settings_.stats_interval.count() > 0)
      co_await net::first_of(wait_streams(), net::both(watch_peer(control), report_stats(shared_control)));
    else
      co_await net::first_of(wait_streams(), watch_peer(control));
    if (settings_.stats_interval.count() > 0) {
      wire::Message last = wire::Stats{local_figures()};  // final figures, so totals are complete
      co_await net::send_message(control, last);
    }
    co_return co_await commit_as_sender(control);
  }
  co_return co_await net::both(commit_as_receiver(control), wait_streams());
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
  wire::Message reply = co_await net::read_message(control);
  auto result = net::expect<wire::Result>(std::move(reply), control.peer());
  if (result.code != 0) throw Error(errc_from_wire(result.code), result.message);
  if (result.value != checksum)
    throw Error(Errc::integrity, "the receiver confirmed a different checksum (" + result.value + " vs " + checksum + ")");
  co_return checksum;
}

awaitable<std::string> Transfer::commit_as_receiver(Connection& control) {
  wire::Message received = co_await net::read_message(control);
  // The sender's per-stream figures may come first, as many as there were intervals.
  while (auto* stats = std::get_if<wire::Stats>(&received)) {
    if (peer_stats_listener_) peer_stats_listener_(std::move(*stats));
    received = co_await net::read_message(control);
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
