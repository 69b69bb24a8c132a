#pragma once
// The engine: one file moving over N data streams plus the control connection. A Transfer either
// sends (reads blocks from a FileSource) or receives (writes them into a FileSink); the client
// and the server use the very same object, so a put is a get seen from the other side.
#include <atomic>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/experimental/concurrent_channel.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <memory>
#include <functional>
#include <mutex>
#include <optional>
#include <vector>

#include "net/connection.hpp"
#include "pxfer/block_planner.hpp"
#include "pxfer/checksum.hpp"
#include "pxfer/compression.hpp"
#include "pxfer/error.hpp"
#include "pxfer/file_io.hpp"
#include "pxfer/socket_tuning.hpp"
#include "pxfer/wire.hpp"

namespace pxfer::transfer {

using net::awaitable;
using net::Connection;

// Figures of one data stream, written by its coroutine and read by reporters on other threads.
struct StreamStats {
  std::atomic<std::uint64_t> bytes{0};  // payload bytes written (sender) or read (receiver)
  std::atomic<std::uint64_t> blocks{0};
  std::atomic<int> fd{-1};              // for TCP_INFO while the stream is open
  BufferGrant local;                    // set before the stream runs
  BufferGrant remote;
  // The TCP figures last read while the socket was open, kept for the totals after it closed.
  std::mutex tcp_mutex;
  wire::StreamFigures last_tcp;
};

struct Settings {
  ChecksumAlgo checksum = ChecksumAlgo::adler32;
  std::uint32_t block_size = 2 << 20;
  std::uint16_t streams = 4;
  SocketTuning tuning;
  std::chrono::milliseconds attach_timeout{30'000};
  // When positive and this side sends, STATS with every stream's TCP figures go to the receiver
  // over the control connection at this interval (--stream-stats on the receiving client).
  std::chrono::milliseconds stats_interval{0};
  CompressionSetting compression;  // used by the sending side
};

enum class Role { send, receive };

class Transfer : public std::enable_shared_from_this<Transfer> {
 public:
  static std::shared_ptr<Transfer> sending(boost::asio::any_io_executor ex, FileSource source, Settings settings);
  static std::shared_ptr<Transfer> receiving(boost::asio::any_io_executor ex, std::unique_ptr<FileSink> sink,
                                             Settings settings);
  ~Transfer();

  Role role() const { return role_; }
  const Settings& settings() const { return settings_; }
  std::uint64_t file_size() const { return planner_.file_size(); }
  StreamStats& stream(std::size_t index) { return *stats_[index]; }
  std::size_t stream_count() const { return stats_.size(); }
  std::uint64_t bytes_moved() const;
  // Block payload bytes that crossed the wire, and the file bytes they stood for.
  std::uint64_t wire_bytes() const { return wire_bytes_.load(); }
  std::uint64_t raw_bytes() const { return raw_bytes_.load(); }

  // Reserves stream slot `index` for a data connection; false if out of range or taken.
  bool claim_stream(std::uint16_t index);
  // Moves blocks over one data connection until this side has nothing more to do on it.
  awaitable<void> run_stream(std::shared_ptr<Connection> conn, std::uint16_t index);
  // The control connection's part: the sender waits for every block to be acknowledged, then
  // sends COMMIT and awaits the receiver's RESULT; the receiver awaits COMMIT while its streams
  // finish, verifies the checksum, renames the file into place and answers RESULT.
  // Returns the verified checksum (hex; empty with --checksum none).
  awaitable<std::string> run_control(Connection& control);

  // This side's figures for every stream: bytes, and TCP_INFO of the streams still open.
  std::vector<wire::StreamFigures> local_figures();
  // Receives the sender's STATS while this side receives (called on the control strand).
  void on_peer_stats(std::function<void(wire::Stats)> listener) { peer_stats_listener_ = std::move(listener); }

  // Ends the transfer with `error` (the first one wins): closes every data connection and removes
  // the temporary file.
  void fail(const Error& error);
  // Starts the watchdog that fails the transfer if not every stream attached in time.
  void arm_attach_deadline();

 private:
  Transfer(boost::asio::any_io_executor ex, Role role, Settings settings, std::uint64_t size);
  awaitable<void> send_blocks(Connection& conn, StreamStats& stats);
  awaitable<void> receive_acks(Connection& conn);
  awaitable<void> receive_blocks(Connection& conn, StreamStats& stats);
  awaitable<void> send_compressible(Connection& conn, StreamStats& stats, Block block, std::vector<std::uint8_t>& buffer,
                                    BlockCompressor& compressor);
  awaitable<void> finish_received_block(Connection& conn, StreamStats& stats, const wire::BlockHeader& header);
  awaitable<void> wait_streams();
  awaitable<void> watch_peer(Connection& control);
  awaitable<void> report_stats(std::shared_ptr<Connection> control);
  awaitable<std::string> commit_as_sender(Connection& control);
  awaitable<std::string> commit_as_receiver(Connection& control);
  void stream_finished();
  void signal_done();
  void cancel_attach_deadline();

  const Role role_;
  const Settings settings_;
  BlockPlanner planner_;  // sender: what to send and what was acknowledged; receiver: what arrived
  std::optional<FileSource> source_;
  std::unique_ptr<FileSink> sink_;
  std::unique_ptr<FileDigest> digest_;
  std::vector<std::unique_ptr<StreamStats>> stats_;

  std::mutex mutex_;
  std::vector<bool> claimed_;
  std::vector<std::weak_ptr<Connection>> connections_;
  std::size_t finished_ = 0;
  std::optional<Error> error_;
  bool done_signalled_ = false;
  boost::asio::experimental::concurrent_channel<void(boost::system::error_code)> done_;
  boost::asio::any_io_executor executor_;
  std::function<void(wire::Stats)> peer_stats_listener_;
  std::atomic<std::uint64_t> wire_bytes_{0};
  std::atomic<std::uint64_t> raw_bytes_{0};
  std::shared_ptr<boost::asio::steady_timer> attach_timer_;  // lives on executor_
};

}  // namespace pxfer::transfer
