// The sending half of a data stream: blocks out of the source onto the connection, and which
// stream takes which block (core/block_placement.hpp). transfer_streams.cpp has the stream's life,
// its ACKs and the receiving half.
#include "transfer_internal.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "io/mapped_block.hpp"
#include "net/frame_io.hpp"

namespace pxfer::transfer {

namespace asio = boost::asio;

// A stream that left a block to a faster one looks at the queue again this soon: the faster one
// may have slowed down, or the queue grown (a broken stream's blocks).
constexpr std::chrono::milliseconds placement_recheck{20};
// Seconds past its expected return after which a stream's figures no longer count (at least; half a
// block's time at its rate when that is longer).
constexpr double stale_after = 0.1;

std::uint32_t copy_flag(const Block& block) { return block.copy ? std::uint32_t{wire::block_copy} : 0u; }

// Takes blocks from the shared queue until every block is acknowledged. A stream with nothing
// to send stays open (a block another stream loses comes back to the queue), says it is alive
// with a PING now and then, and sleeps until woken.
awaitable<void> Transfer::send_blocks(Connection& conn, StreamRun& run) {
  BlockBuffer buffer(largest_block());  // untouched while blocks go out from a mapping
  std::optional<BlockCompressor> compressor;
  if (settings_.compression.mode != CompressMode::none) compressor.emplace(settings_.compression);
  const auto heartbeat = heartbeat_of(settings_);
  for (;;) {
    if (over() && !planner_.all_acknowledged()) co_return;  // failed: run_stream reports why
    // -p auto shed it (here, or the receiver's RETIRE): END once its blocks are out.
    if (run.index >= retire_from_.load() || run.retire_asked.load()) break;
    bool look_again_soon = false;
    std::optional<Block> block = next_block_for(run, look_again_soon);
    if (block) {
      {
        std::lock_guard lock(run.mutex);
        run.unacknowledged.push_back(*block);
        run.stats.outstanding.store(static_cast<std::uint32_t>(run.unacknowledged.size()));
      }
      if (compressor)
        co_await send_compressible(conn, run, *block, buffer, *compressor);
      else
        co_await send_block(conn, run, *block, buffer);
      run.sent();
      watch_send_buffer(run);
      continue;
    }
    if (ready_ && planner_.all_acknowledged()) break;
    if (StreamRun::since(run.last_sent) >= heartbeat) {
      co_await net::send_message(conn, ping_message);
      run.sent();
    }
    run.idle->expires_after(look_again_soon ? std::min<std::chrono::milliseconds>(placement_recheck, heartbeat) : heartbeat);
    co_await run.idle->async_wait(asio::as_tuple(asio::use_awaitable));  // woken early by cancel
  }
  run.stats.send_rate.store(0);  // out of the other streams' reckoning
  co_await net::send_message(conn, end_message);
}

// The block this stream sends next: a fresh one when it is the stream for it (takes_next_block);
// once none is left and this stream holds nothing, a second copy of a block overdue on another
// (BlockPlanner::next_copy). `look_again_soon` when the answer may change within a recheck.
std::optional<Block> Transfer::next_block_for(StreamRun& run, bool& look_again_soon) {
  look_again_soon = false;
  if (!ready_) return std::nullopt;
  if (!takes_next_block(run)) {
    look_again_soon = true;
    return std::nullopt;
  }
  if (auto block = planner_.next()) return block;
  if (!settings_.block_copies || planner_.all_acknowledged()) return std::nullopt;
  look_again_soon = true;  // a block out on another stream may become overdue
  {
    std::lock_guard lock(run.mutex);
    if (!run.unacknowledged.empty()) return std::nullopt;
  }
  const auto after = planner_.copy_after();
  auto copy = planner_.next_copy();
  if (copy) {
    block_copies_ += 1;
    char text[160];
    std::snprintf(text, sizeof text, "block at offset %llu sent again on stream %u: its first copy is overdue (over %.1f s out)",
                  static_cast<unsigned long long>(copy->offset), static_cast<unsigned>(run.index),
                  std::chrono::duration<double>(after).count());
    tell_stream_event(text);
  }
  return copy;
}

// Whether this stream takes the next block or leaves it to one that gets it onto the wire sooner
// (core/block_placement.hpp). One TCP_INFO of its own socket per block; the other streams' figures
// are those they noted at their last look at the queue, their backlog counted down since.
bool Transfer::takes_next_block(StreamRun& run) {
  const std::uint64_t queued = planner_.queued_bytes();
  if (queued == 0) return true;  // nothing to take: next() says so
  const auto now = Clock::now();
  StreamLoad self;  // no figures: not measured, takes the block
  if (TcpSnapshot tcp; read_tcp_info(run.stats.fd.load(), tcp)) self = load_of(tcp, settings_.block_size);
  run.loads.clear();
  const std::uint16_t retiring = retire_from_.load();
  for (std::size_t i = 0; i < stats_.size() && i < retiring; ++i) {
    if (i == run.index) continue;
    const StreamStats& s = *stats_[i];
    const double rate = s.send_rate.load(std::memory_order_relaxed);
    if (rate <= 0 || s.fd.load(std::memory_order_relaxed) < 0) continue;
    const auto free_at = Clock::time_point(Clock::duration(s.free_at.load(std::memory_order_relaxed)));
    const double backlog = std::chrono::duration<double>(free_at - now).count();
    // Not back for a block well after it should have been: stuck (a stalled path, a burst loss),
    // so its figures say nothing, and waiting for it would leave the blocks to no one.
    if (-backlog > std::max(stale_after, 0.5 * settings_.block_size / rate)) continue;
    run.loads.push_back({rate, std::max(0.0, backlog)});
  }
  const bool take = takes_block(self, run.loads, queued, settings_.block_size);
  const double busy = self.backlog + (take && self.rate > 0 ? settings_.block_size / self.rate : 0);
  run.stats.free_at.store((now + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(busy)))
                              .time_since_epoch()
                              .count(),
                          std::memory_order_relaxed);
  run.stats.send_rate.store(self.rate, std::memory_order_relaxed);
  return take;
}

awaitable<void> Transfer::send_block(Connection& conn, StreamRun& run, Block block, BlockBuffer& buffer) {
  wire::BlockHeader header{block.offset, block.length, copy_flag(block), block.length};
  auto header_bytes = wire::encode_block_header(header);
  run.mac->begin(header_bytes);
  if (conn.tls() && block.length <= pipeline_chunk) co_return co_await send_whole_block(conn, run, block, header_bytes, buffer);
  co_await conn.write_all(header_bytes);
  // A clear stream sends straight from a mapping of the source: the hash and the MAC read the
  // page cache and send() copies it into the socket, one copy per byte instead of two (mapping
  // and unmapping the pages eat most of the saving: 0.325 -> 0.294 CPU s per GiB at the sender,
  // docs/performance.md section 6; sendfile measured worse). Under TLS, OpenSSL reads the bytes
  // in user space outside any guard against a truncation of the file (io/mapped_block.hpp), so
  // those are read into the buffer.
  std::optional<io::MappedBlock> mapped;
  if (!conn.tls()) mapped = io::MappedBlock::map(source_->fd(), block.offset, block.length);
  std::span<const std::uint8_t> data = mapped ? mapped->bytes() : std::span<const std::uint8_t>(buffer.first(block.length));
  // Chunk by chunk: each chunk is hashed, MACed and copied into the socket while it is still in
  // the CPU cache (a whole 4 MiB block would not fit).
  BlockDigest digest{block.offset};
  for (std::uint32_t done = 0; done < block.length;) {
    std::uint32_t n = std::min(pipeline_chunk, block.length - done);
    std::span<const std::uint8_t> chunk = data.subspan(done, n);
    auto hash = [&] {
      digest_->update(digest, chunk);
      run.mac->update(chunk);
    };
    if (!mapped) {
      source_->read_at(block.offset + done, std::span(buffer.data() + done, n));
      hash();
    } else if (!mapped->guarded(hash)) {
      source_->shrank(block.offset + done);
    }
    try {
      co_await conn.write_all(chunk, &run.stats.bytes);
    } catch (const Error&) {
      if (mapped) source_->check_unchanged();  // send() from a truncated mapping fails with EFAULT
      throw;
    }
    done += n;
  }
  const BlockTag tag = run.mac->finish();
  co_await conn.write_all(tag);
  if (!mapped) {
    digest_->complete(digest, data);
  } else if (!mapped->guarded([&] { digest_->complete(digest, data); })) {
    source_->shrank(block.offset);
  }
  run.stats.blocks.fetch_add(1, std::memory_order_relaxed);
  wire_bytes_ += block.length;
}

// Under TLS, a block of one chunk (every small file) is read, hashed and MACed first and then
// leaves in one write with its headers and tag: one run of TLS records and one send instead of
// three of each.
awaitable<void> Transfer::send_whole_block(Connection& conn, StreamRun& run, Block block,
                                           std::span<const std::uint8_t> header_bytes, BlockBuffer& buffer) {
  std::span<std::uint8_t> data = buffer.first(block.length);
  source_->read_at(block.offset, data);
  BlockDigest digest{block.offset};
  digest_->update(digest, data);
  run.mac->update(data);
  const BlockTag tag = run.mac->finish();
  // (g++ 12 miscompiles a braced list of spans inside co_await: "array used as initializer".)
  std::vector<std::span<const std::uint8_t>> parts{header_bytes, data, tag};
  co_await conn.write_parts(parts);
  run.stats.bytes.fetch_add(block.length, std::memory_order_relaxed);
  digest_->complete(digest, data);
  run.stats.blocks.fetch_add(1, std::memory_order_relaxed);
  wire_bytes_ += block.length;
}

// With compression the whole block must be read before it can be sent: read and hash it chunk
// by chunk, compress it, and send the smaller of the two forms.
awaitable<void> Transfer::send_compressible(Connection& conn, StreamRun& run, Block block,
                                            BlockBuffer& buffer, BlockCompressor& compressor) {
  std::span<std::uint8_t> data = buffer.first(block.length);
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
  wire::BlockHeader header{block.offset, block.length,
                           copy_flag(block) | (packed.empty() ? 0u : std::uint32_t{wire::block_compressed_zstd}),
                           static_cast<std::uint32_t>(payload.size())};
  auto header_bytes = wire::encode_block_header(header);
  run.mac->begin(header_bytes);
  run.mac->update(payload);
  const BlockTag tag = run.mac->finish();
  co_await conn.write_all(header_bytes);
  auto start = Clock::now();
  co_await conn.write_all(payload, packed.empty() ? &run.stats.bytes : nullptr);
  co_await conn.write_all(tag);
  compressor.sent(payload.size(), std::chrono::duration<double>(Clock::now() - start).count());
  if (!packed.empty()) run.stats.bytes.fetch_add(block.length, std::memory_order_relaxed);
  run.stats.blocks.fetch_add(1, std::memory_order_relaxed);
  wire_bytes_ += payload.size();
}

}  // namespace pxfer::transfer
