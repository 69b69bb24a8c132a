// The data path of the engine: a stream slot's life, the sender's ACKs and stall watch, the
// receiver (blocks in, written, ACKed), and the per-stream TCP figures. Blocks go out in
// transfer_send.cpp.
#include "transfer_internal.hpp"

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
#include "net/quiet_wait.hpp"
#include "net/race.hpp"
#include "pxfer/core/rate_meter.hpp"

namespace pxfer::transfer {

namespace asio = boost::asio;

awaitable<void> Transfer::run_stream(std::shared_ptr<Connection> conn, std::uint16_t index, MacKey block_key,
                                     CleanEnd clean_end) {
  StreamRun run{.index = index, .stats = *stats_[index], .mutex = {}, .unacknowledged = {}, .idle = {}, .mac = {}, .decompressor = {}, .packed = {}, .loads = {}};
  // Under TLS with cap_tls_bound_streams the record layer authenticates the blocks, and the
  // connection is bound to the transfer (its ATTACH_PROOF, or it is the control connection the
  // key comes from): a Poly1305 per block would cost ~0.1 CPU s per GiB at each end for nothing.
  if (blocks_by_tls(*conn))
    run.mac = std::make_unique<BlockMac>(BlockMac::ByTls{});
  else
    run.mac = std::make_unique<BlockMac>(block_key);
  run.idle = std::make_shared<asio::steady_timer>(co_await asio::this_coro::executor);
  {
    std::lock_guard lock(mutex_);
    if (error_) throw *error_;
    idle_timers_.push_back(run.idle);
  }
  const int fd = conn->socket().native_handle();
  run.stats.fd.store(fd);
  run.stats.outstanding.store(role_ == Role::receive ? 1 : 0);
  run.stats.let_go.store(false);
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
    run.stats.send_rate.store(0);
  }
  if (failure) {
    conn->close();
    // What this connection carried unacknowledged goes to the streams still alive.
    std::deque<Block> orphans;
    {
      std::lock_guard lock(run.mutex);
      orphans.swap(run.unacknowledged);
      run.stats.outstanding.store(0);
    }
    for (const auto& b : orphans) planner_.requeue(b);
    release_slot(index, *conn);
    if (let_go_of(run)) co_return;  // it broke nothing (cap_block_copies): no failure, no retry
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
  if (clean_end) clean_end(conn);
  release_slot(index, *conn);
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
        run.stats.outstanding.store(static_cast<std::uint32_t>(run.unacknowledged.size()));
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
    } else if (settings_.retire_streams && std::holds_alternative<wire::Retire>(message)) {
      if (run.index > 0) {  // the first stream stays, whatever a receiver asks
        run.retire_asked = true;
        wake_idle_streams();
      }
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
  // Cancelled when the stream's work ends (once per file): quietly, not by an exception rethrown
  // through every frame above (docs/performance.md section 5; net/race.hpp tells an outer cancel apart).
  co_await asio::this_coro::throw_if_cancelled(false);
  asio::steady_timer timer(co_await asio::this_coro::executor);
  for (;;) {
    timer.expires_after(heartbeat);
    const bool cancelled = co_await net::wait_unless_cancelled(timer);
    if (cancelled) co_return;
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

// A block reaches the file only whole and verified (issue 11, point 3): it is read into the
// stream's buffer (at most one block size, limits.hpp), its tag checked, and only then written,
// once: a block already in the file is acknowledged again but never rewritten or hashed again.
awaitable<void> Transfer::receive_blocks(Connection& conn, StreamRun& run) {
  BlockBuffer buffer(largest_block());
  std::array<std::uint8_t, wire::block_header_size> block_bytes{};
  for (;;) {
    wire::FrameHeader frame = co_await net::read_header(conn);
    run.heard();
    if (frame.type != wire::FrameType::block) {
      wire::Message message = co_await net::read_payload(conn, frame);
      if (std::holds_alternative<wire::Ping>(message)) {
        co_await ask_retire_if_shed(conn, run);
        continue;
      }
      net::expect<wire::End>(std::move(message), conn.peer());
      run.stats.outstanding.store(0);
      co_await net::send_message(conn, end_message);
      co_return;
    }
    if (frame.length < wire::block_header_size + wire::block_tag_size)
      throw Error(Errc::protocol, "truncated BLOCK frame from " + conn.peer());
    co_await conn.read_exact(block_bytes);
    wire::BlockHeader header;
    auto status = wire::decode_block_header(frame, block_bytes, header);
    if (status != wire::DecodeStatus::ok)
      throw Error(Errc::protocol, std::string("bad BLOCK frame from ") + conn.peer() + ": " + wire::to_string(status));
    if (!planner_.is_block(Block{header.offset, header.raw_length}))
      throw Error(Errc::protocol, "block at offset " + std::to_string(header.offset) + " of " +
                                      std::to_string(header.raw_length) + " bytes does not fit the file's block plan");
    run.mac->begin(wire::encode_block_header(header));
    std::span<std::uint8_t> data = buffer.first(header.raw_length);
    BlockDigest digest{header.offset};
    std::uint32_t adler = 1;
    co_await receive_payload(conn, run, header, data, digest, adler);
    co_await finish_received_block(conn, run, header, data, digest, adler);
    co_await ask_retire_if_shed(conn, run);
  }
}

// A get under -p auto sheds streams at the receiver (retire_streams_from): each shed stream asks
// its sender, once, to send no further block; the sender's END follows the blocks already on their
// way, which are received and acknowledged as usual, so no block is lost or sent twice.
awaitable<void> Transfer::ask_retire_if_shed(Connection& conn, StreamRun& run) {
  if (!settings_.retire_streams || run.retire_sent || run.index < retire_from_.load()) co_return;
  run.retire_sent = true;
  co_await net::send_message(conn, retire_message);
  run.sent();
}

// The payload into `data` (decompressed), hashed chunk by chunk while it is hot, and its tag
// checked; nothing is written here.
awaitable<void> Transfer::receive_payload(Connection& conn, StreamRun& run, const wire::BlockHeader& header,
                                          std::span<std::uint8_t> data, BlockDigest& digest, std::uint32_t& adler) {
  // The journal keeps each block's Adler-32; the adler32 digest computes it anyway.
  const bool journal_adler = sink_->resuming() && settings_.checksum != ChecksumAlgo::adler32;
  if (header.flags & wire::block_compressed_zstd) {
    if (!run.decompressor) run.decompressor = std::make_unique<BlockDecompressor>();
    run.packed.resize(header.wire_length);  // < raw_length <= block size: checked by the decoder
    co_await conn.read_exact(run.packed);
    run.heard();
    run.mac->update(run.packed);
    co_await check_tag(conn, run, header);
    run.decompressor->decompress(run.packed, data);
    run.stats.bytes.fetch_add(header.raw_length, std::memory_order_relaxed);
    digest_->update(digest, data);
    adler = settings_.checksum == ChecksumAlgo::adler32 ? digest.running : sink_->resuming() ? adler32_of(data) : 0;
    co_return;
  }
  std::size_t maced = 0;  // the MAC is fed whole 16-byte units while the pieces arrive (faster)
  for (std::size_t received = 0; received < data.size();) {
    std::size_t n = co_await conn.read_some(data.subspan(received, std::min<std::size_t>(data.size() - received, pipeline_chunk)));
    run.heard();
    run.stats.bytes.fetch_add(n, std::memory_order_relaxed);
    auto piece = data.subspan(received, n);
    digest_->update(digest, piece);
    if (journal_adler) adler = adler32_of(piece, adler);
    received += n;
    const std::size_t whole = received == data.size() ? received : received & ~std::size_t{15};
    if (whole > maced) run.mac->update(data.subspan(maced, whole - maced));
    maced = std::max(maced, whole);
  }
  co_await check_tag(conn, run, header);
  if (!journal_adler) adler = digest.running;
}

// A block whose tag does not verify was changed or made up on the path: nothing of it is kept,
// the connection is closed (Errc::network, so the stream reconnects) and the sender's copy of
// the block goes back to its queue when it sees the connection end.
awaitable<void> Transfer::check_tag(Connection& conn, StreamRun& run, const wire::BlockHeader& header) {
  BlockTag tag{};
  co_await conn.read_exact(tag);
  if (run.mac->verify(tag)) co_return;
  spdlog::warn("stream {}: block at offset {} from {} failed its MAC (changed or injected on the path?); "
               "discarded, stream closed",
               run.index, header.offset, conn.peer());
  throw Error(Errc::network, "block at offset " + std::to_string(header.offset) + " from " + conn.peer() +
                                 " failed its MAC (changed or injected on the path?); discarded");
}

// The block arrived whole and verified: written and hashed once, recorded and acknowledged. A
// block that arrives a second time (its first ACK died with a broken stream) is acknowledged
// again without touching the file.
awaitable<void> Transfer::finish_received_block(Connection& conn, StreamRun& run, const wire::BlockHeader& header,
                                                std::span<const std::uint8_t> data, BlockDigest& digest,
                                                std::uint32_t adler) {
  const auto index = static_cast<std::size_t>(header.offset / settings_.block_size);
  if (header.flags & wire::block_copy) block_copies_ += 1;
  bool first_time = false;
  auto claim = ledger_.claim(index);
  // A copy of a block another stream is writing now (cap_block_copies): acknowledged once that
  // write is done, so that the sender's COMMIT cannot overtake it; if that write failed, the block
  // is free again and this copy is written.
  for (std::optional<asio::steady_timer> wait; claim == BlockLedger::Claim::duplicate && !ledger_.is_committed(index);) {
    if (over()) throw Error(Errc::network, "stream " + std::to_string(run.index) + ": the transfer ended");
    if (!wait) wait.emplace(co_await asio::this_coro::executor);
    wait->expires_after(std::chrono::milliseconds(1));
    co_await wait->async_wait(asio::use_awaitable);
    claim = ledger_.claim(index);
  }
  if (claim == BlockLedger::Claim::write) {
    try {
      sink_->write_at(header.offset, data);
      digest_->complete(digest, data);
      sink_->block_written(index, adler);
    } catch (...) {
      ledger_.release(index);
      throw;
    }
    ledger_.committed(index);
    first_time = planner_.mark_done(header.offset);
  } else {
    repeated_bytes_ += header.raw_length;  // its stream counted them; the file gained nothing
    spdlog::debug("stream {}: block at offset {} arrived again; already in the file, not rewritten", run.index,
                  header.offset);
  }
  run.stats.blocks.fetch_add(1, std::memory_order_relaxed);
  wire_bytes_ += header.wire_length;
  wire::Message ack = wire::Ack{header.offset, header.raw_length};
  co_await net::send_message(conn, ack);
  run.sent();
  if (first_time && planner_.all_acknowledged()) check_complete();
}

// A stream that broke but broke nothing (cap_block_copies): on the sender, one this side let go of
// because every block it held was acknowledged on another stream; on the receiver, one that broke
// after every block was in the file, which is the sender letting go of it. No recovery, no retry.
bool Transfer::let_go_of(StreamRun& run) {
  if (!settings_.block_copies) return false;
  const bool let_go = run.stats.let_go.exchange(false);
  const bool counted = role_ == Role::send ? let_go : let_go || planner_.all_acknowledged();
  if (counted) streams_let_go_ += 1;
  return counted;
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
  // Slots up to the last one that ever moved: -p auto opens its slots as it goes, and a view of
  // 64 streams of which 60 never connected says nothing. A prefix, so positions stay streams.
  std::size_t used = 1;
  for (std::size_t i = 0; i < stats_.size(); ++i)
    if (stats_[i]->fd.load() >= 0 || stats_[i]->bytes.load(std::memory_order_relaxed) > 0) used = i + 1;
  std::vector<wire::StreamFigures> out;
  for (std::size_t i = 0; i < std::min(used, stats_.size()); ++i) {
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

}  // namespace pxfer::transfer
