#pragma once
// The engine: one file moving over N data streams plus the control connection. A Transfer either
// sends (reads blocks from a FileSource) or receives (writes them into a FileSink); the client
// and the server use the very same object, so a put is a get seen from the other side.
#include "pxfer/engine/layer.hpp"
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
#include "engine/block_buffer.hpp"
#include "engine/block_ledger.hpp"
#include "checksum/block_mac.hpp"
#include "plan/block_planner.hpp"
#include "pxfer/core/checksum.hpp"
#include "pxfer/core/compression.hpp"
#include "pxfer/common/error.hpp"
#include "pxfer/core/retry.hpp"
#include "pxfer/core/send_window.hpp"
#include "io/file_io.hpp"
#include "io/stored_checksum.hpp"
#include "pxfer/io/socket_tuning.hpp"
#include "wire/wire.hpp"
#include "plan/settings.hpp"

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
  // Sender: where the next block goes (core/block_placement.hpp). The stream's rate (bytes/s) and
  // when it will have put on the wire what it holds, as of its last look at the queue; a rate of
  // 0 keeps it out of the other streams' reckoning (not sending, or shed).
  std::atomic<double> send_rate{0};
  std::atomic<std::chrono::steady_clock::rep> free_at{0};
  // Sender: blocks this stream sent that it has no acknowledgement for; receiver: 1 until the
  // sender's END. And whether the transfer let go of the stream because what it still carries
  // is acknowledged on other streams (cap_block_copies).
  std::atomic<std::uint32_t> outstanding{0};
  std::atomic<bool> let_go{false};
};

enum class Role { send, receive };

class Transfer : public std::enable_shared_from_this<Transfer> {
 public:
  // With `stored`, the source's checksum is known already (pxferd's stored checksum of the file,
  // io/stored_checksum.hpp): the sender reports it and hashes nothing; the receiver still
  // computes its own from the bytes it got and compares.
  static std::shared_ptr<Transfer> sending(boost::asio::any_io_executor ex, FileSource source, Settings settings,
                                           std::optional<std::string> stored = std::nullopt);
  // pxferd's get of a file without a stored checksum: once the receiver confirmed the checksum the
  // sender computed, it is kept with the file if the file is still as `seen` describes it.
  void keep_checksum(FileStamp seen) { keep_checksum_of_ = seen; }
  static std::shared_ptr<Transfer> receiving(boost::asio::any_io_executor ex, std::unique_ptr<FileSink> sink,
                                             Settings settings);
  // The receiving side of a retry that finds its file committed already (its RESULT was lost):
  // every block present, no file written; COMMIT is answered ok when its size and checksum are
  // `checksum`, the one recorded when the file was committed.
  static std::shared_ptr<Transfer> already_committed(boost::asio::any_io_executor ex, Settings settings,
                                                     std::uint64_t size, std::string checksum);
  ~Transfer();

  Role role() const { return role_; }
  const Settings& settings() const { return settings_; }
  std::uint64_t file_size() const { return planner_.file_size(); }
  // What a block buffer must hold: a small file's one block, not a whole block size (a 64 KiB
  // file would otherwise zero 2 MiB per stream at each end).
  std::size_t largest_block() const {
    return static_cast<std::size_t>(std::min<std::uint64_t>(settings_.block_size, file_size()));
  }
  // The sender's source mtime (identifies the source for a resume); 0 on the receiving side.
  std::int64_t source_mtime_ns() const { return source_ ? source_->mtime_ns() : 0; }
  StreamStats& stream(std::size_t index) { return *stats_[index]; }
  // Bytes of the file this attempt moved: acknowledged by the receiver on the sending side,
  // received on the receiving side.
  std::uint64_t bytes_moved() const;
  // Block payload bytes that crossed the wire (fewer than the file's when compressed).
  std::uint64_t wire_bytes() const { return wire_bytes_.load(); }

  // Gives stream slot `index` to `conn`; false if out of range, the transfer is over, or the slot
  // is still held by a live connection: a second ATTACH never replaces a live stream (issue 11),
  // the peer tries again once the old connection ended. `why` (if given) gets the reason.
  bool claim_stream(std::uint16_t index, std::shared_ptr<Connection> conn, std::string* why = nullptr);
  // Moves blocks over one data connection until this side has nothing more to do on it. Every
  // block carries a Poly1305 tag under `block_key` (checksum/block_mac.hpp); a block that fails it closes the
  // connection. When the connection fails, its unacknowledged blocks go back to the queue for the
  // other streams; a failure that a new connection cannot cure (pxfer/core/retry.hpp) also fails the
  // transfer. When the stream ends cleanly (END both ways, nothing of this transfer left in flight
  // on it), `clean_end` (if given) gets the connection before the slot is released, so a client
  // can keep it for its next file before this transfer counts as done (client/stream_pool.hpp).
  using CleanEnd = std::function<void(std::shared_ptr<Connection>)>;
  awaitable<void> run_stream(std::shared_ptr<Connection> conn, std::uint16_t index, MacKey block_key,
                             CleanEnd clean_end = {});
  // The transfer's key from the control connection's TLS exporter (both ends, before any data
  // stream attaches): ATTACH proofs and block keys derive from it.
  void set_data_key(const MacKey& key);
  MacKey data_key() const;
  // Whether blocks on `conn` rely on its TLS alone and carry a zero tag (cap_tls_bound_streams,
  // checksum/block_mac.hpp): a TLS connection of a transfer whose two ends both offered it.
  bool blocks_by_tls(const Connection& conn) const { return settings_.tls_bound_streams && conn.tls(); }
  // The ATTACH_PROOF of data stream `stream` on `conn` for the server's `nonce` (both ends compute
  // it): bound to the connection's own TLS channel when blocks_by_tls(conn).
  AttachProof attach_proof_on(const Connection& conn, const wire::Token& token, std::uint16_t stream,
                              const AttachNonce& nonce) const;
  // An ATTACH that carried its proof (cap_attach_proven) chose its own nonce: each is taken once
  // per transfer, so a copied ATTACH, replayed once the stream's slot is free, joins nothing.
  // False for a nonce seen before, or past limits::attach_nonces_per_transfer.
  bool take_attach_nonce(const AttachNonce& nonce);
  // True once the transfer failed or every block is where it belongs: no stream is worth
  // reconnecting any more.
  bool over() const;
  // -p auto: the sender's streams from `first` on take no further block, end cleanly (END both
  // ways, every block they sent acknowledged) and leave their slots free; a stream must remain.
  // On a receiver (a get) each such stream asks its sender to do so with RETIRE, where both ends
  // can (Settings::retire_streams).
  void retire_streams_from(std::uint16_t first) {
    retire_from_.store(std::max<std::uint16_t>(1, first));
    wake_idle_streams();
  }
  // -p auto grew again after shedding: no stream retires any more (the shed ones come back under
  // their old indexes once slots_free says their connections let go).
  void keep_all_streams() { retire_from_.store(0xffff); }
  // Data connections moving blocks now.
  unsigned attached_streams() const;
  // No connection holds a slot in [first, end).
  bool slots_free(std::uint16_t first, std::uint16_t end) const;
  // A stream the client stopped reconnecting; when it was the last one, the transfer fails.
  void give_up_stream(std::uint16_t index, const Error& why);

  // Right after OPEN_OK, on the control connection: the receiver sends what it kept from an
  // earlier attempt (HAVE frames, at least one), the sender reads them, skips those blocks, and
  // only then lets its streams send.
  awaitable<void> exchange_have(Connection& control);
  // Resume. The receiver's blocks kept from an earlier attempt (checked against the journal
  // when the sink was opened), as HAVE frames for the sender.
  std::vector<wire::Have> have_frames() const;
  // The sender skips what the receiver has (its checksum still covers those blocks: they are
  // read from the source here). Returns false for a HAVE that does not fit the file.
  bool apply_have(const wire::Have& have);
  // Every block is at the receiver already (an empty file, or all resumed): no stream is needed.
  bool nothing_to_move() const;
  // The sender may start sending blocks (after the receiver's HAVE frames were applied).
  void start_sending();
  // Bytes not moved because the receiver had them already.
  std::uint64_t resumed_bytes() const { return resumed_bytes_.load(); }
  // Data streams that broke or stalled and whose blocks went to other streams.
  std::uint64_t stream_recoveries() const { return recoveries_.load(); }
  // Blocks sent a second time because their first copy was overdue (cap_block_copies): as the
  // sender, the copies this side sent; as the receiver, the copies that arrived (BLOCK flag
  // block_copy; its first copy may never have).
  std::uint64_t block_copies() const { return block_copies_.load(); }
  // Data streams reset because all they still carried were copies of blocks already in the file.
  std::uint64_t streams_let_go() const { return streams_let_go_.load(); }
  // Told when a sending stream pins its send buffer past autotuning's maximum, or finds that it
  // cannot (core/send_window.hpp): one line each.
  void on_window_event(std::function<void(const std::string&)> listener) { window_listener_ = std::move(listener); }
  // Sender: "pinned on 2 streams, up to 8.0 MiB; the first: ..."; what a stream said when none
  // could pin; "" when the send buffers never held a stream.
  std::string send_window_account() const;
  // Told of every stream that broke or stalled and was replaced (one line each).
  void on_stream_event(std::function<void(const std::string&)> listener) { stream_event_listener_ = std::move(listener); }
  // The control connection's part of the transfer, called by both ends after exchange_have:
  // the sender waits for every block to be acknowledged, then sends COMMIT and awaits the
  // receiver's RESULT; the receiver awaits COMMIT while its streams finish, verifies the
  // checksum, renames the file into place and answers RESULT. With `streams_on_control`
  // (wire::moves_on_control) the control connection is also the only data stream, so a one-block
  // file needs no data connection; a failure on it closes it. Returns the verified checksum (hex;
  // empty with --checksum none).
  awaitable<std::string> run_control(std::shared_ptr<Connection> control, bool streams_on_control);

  // Receiver: the checksum of the file this side verified and renamed into place, once it did (a
  // failure after that, such as RESULT not reaching the sender, leaves a whole file behind).
  std::optional<std::string> committed_here() const {
    std::lock_guard lock(mutex_);
    return committed_here_;
  }
  // This side's figures for every stream: bytes, and TCP_INFO of the streams still open.
  std::vector<wire::StreamFigures> local_figures();
  // Receives the sender's STATS while this side receives (called on the control strand).
  void on_peer_stats(std::function<void(wire::Stats)> listener) { peer_stats_listener_ = std::move(listener); }

  // Ends the transfer with `error` (the first one wins): closes every data connection and removes
  // the temporary file, or keeps it for a resume when the error allows one.
  void fail(const Error& error);
  // How errors name the other end ("pxferd at HOST:PORT"); the control connection's peer address
  // when not set. Set before run_control.
  void set_far_end(std::string text) { far_end_ = std::move(text); }
  // Starts the watchdog that fails the transfer if not every stream attached in time, or if no
  // stream is left for that long (the client gave up, or the path died).
  void arm_attach_deadline();

 private:
  Transfer(boost::asio::any_io_executor ex, Role role, Settings settings, std::uint64_t size);
  bool streams_on_control_ = false;  // run_on_control: the stream phase is over before COMMIT
  struct StreamRun;
  struct Slot {
    std::shared_ptr<Connection> connection;  // the one moving data on it now, if any
    bool ever_attached = false;
    std::string broke;  // why its last connection failed, until a new one attaches
  };
  awaitable<void> send_blocks(Connection& conn, StreamRun& run);
  bool takes_next_block(StreamRun& run);
  std::optional<Block> next_block_for(StreamRun& run, bool& look_again_soon);
  bool let_go_of(StreamRun& run);
  void let_go_of_redundant_streams();
  awaitable<void> receive_acks(Connection& conn, StreamRun& run);
  awaitable<void> receive_blocks(Connection& conn, StreamRun& run);
  awaitable<void> ask_retire_if_shed(Connection& conn, StreamRun& run);
  awaitable<void> watch_progress(Connection& conn, StreamRun& run);
  awaitable<void> send_block(Connection& conn, StreamRun& run, Block block, BlockBuffer& buffer);
  awaitable<void> send_whole_block(Connection& conn, StreamRun& run, Block block, std::span<const std::uint8_t> header_bytes,
                                   BlockBuffer& buffer);
  awaitable<void> send_compressible(Connection& conn, StreamRun& run, Block block, BlockBuffer& buffer,
                                    BlockCompressor& compressor);
  awaitable<void> finish_received_block(Connection& conn, StreamRun& run, const wire::BlockHeader& header,
                                        std::span<const std::uint8_t> data, BlockDigest& digest, std::uint32_t adler);
  awaitable<void> receive_payload(Connection& conn, StreamRun& run, const wire::BlockHeader& header,
                                  std::span<std::uint8_t> data, BlockDigest& digest, std::uint32_t& adler);
  awaitable<void> check_tag(Connection& conn, StreamRun& run, const wire::BlockHeader& header);
  awaitable<void> wait_streams();
  void release_slot(std::uint16_t index, const Connection& conn);
  void check_complete();
  void wake_idle_streams();
  void tell_stream_event(const std::string& text);
  void watch_send_buffer(StreamRun& run);
  const SendWindowSettings& window_settings();
  void verify_resumed_blocks();
  // The sender's only reader of the control connection while a transfer runs: heartbeats noted,
  // RESULT handed to commit_as_sender through `answers`, ERROR fails the transfer. One reader for
  // the whole exchange, so a read is never cancelled halfway through a frame.
  using Answers = boost::asio::experimental::concurrent_channel<void(boost::system::error_code, wire::Message)>;
  awaitable<void> watch_peer(Connection& control, Answers& answers);
  awaitable<std::string> send_and_commit(Connection& control, Answers& answers);
  awaitable<std::string> commit_exchange(Connection& control);
  awaitable<std::string> send_control(Connection& control);
  awaitable<void> keep_control_alive(Connection& control);
  awaitable<wire::Message> read_control(Connection& control);
  awaitable<void> report_stats(std::shared_ptr<Connection> control);
  // With `answers`, RESULT comes through watch_peer; without, it is read here.
  awaitable<std::string> commit_as_sender(Connection& control, Answers* answers);
  awaitable<wire::Message> await_commit_answer(Connection& control, Answers* answers);
  awaitable<std::string> commit_as_receiver(Connection& control);
  void signal_done();
  void cancel_attach_deadline();

  const Role role_;
  const Settings settings_;
  BlockPlanner planner_;  // sender: what to send and what was acknowledged; receiver: what arrived
  BlockLedger ledger_;    // receiver: which blocks are in the file (written once, never again)
  MacKey data_key_{};     // under mutex_
  std::vector<AttachNonce> attach_nonces_;  // under mutex_: the nonces of proven ATTACHes
  std::optional<FileSource> source_;
  std::optional<FileStamp> keep_checksum_of_;
  std::unique_ptr<FileSink> sink_;
  std::unique_ptr<FileDigest> digest_;
  std::vector<std::unique_ptr<StreamStats>> stats_;

  mutable std::mutex mutex_;
  std::vector<Slot> slots_;
  std::vector<std::weak_ptr<Connection>> connections_;
  std::vector<std::weak_ptr<boost::asio::steady_timer>> idle_timers_;  // streams waiting for work
  std::size_t given_up_ = 0;
  std::optional<Error> error_;
  std::atomic<bool> ready_{false};  // sender: the receiver's HAVE frames were applied
  std::vector<bool> resumed_;       // receiver: blocks kept from an earlier attempt
  std::atomic<std::uint64_t> resumed_bytes_{0};
  // A receiver's: blocks that arrived a second time (a copy of an overdue block, a resend after a
  // broken stream's lost ACK), counted by their streams but not moved into the file.
  std::atomic<std::uint64_t> repeated_bytes_{0};
  std::atomic<std::uint64_t> recoveries_{0};
  std::atomic<std::uint64_t> block_copies_{0}, streams_let_go_{0};
  std::atomic<std::uint16_t> retire_from_{0xffff};
  std::atomic<std::chrono::steady_clock::rep> control_heard_{std::chrono::steady_clock::now().time_since_epoch().count()};
  std::function<void(const std::string&)> stream_event_listener_;
  std::function<void(const std::string&)> window_listener_;
  std::once_flag window_settings_once_;
  SendWindowSettings window_settings_;
  std::atomic<std::uint32_t> buffers_pinned_{0}, largest_pin_{0};
  // Under mutex_: the first pin a stream made, and the first thing one said otherwise.
  std::string first_pin_, window_note_;
  bool done_signalled_ = false;
  boost::asio::experimental::concurrent_channel<void(boost::system::error_code)> done_;
  boost::asio::any_io_executor executor_;
  std::function<void(wire::Stats)> peer_stats_listener_;
  std::atomic<std::uint64_t> wire_bytes_{0};
  std::shared_ptr<boost::asio::steady_timer> attach_timer_;  // lives on executor_
  std::string far_end_;
  // The sender sent COMMIT: the receiver is flushing and renaming on its control strand, so its
  // heartbeats may pause; COMMIT's answer has a deadline of its own.
  std::atomic<bool> commit_sent_{false};
  std::optional<std::string> committed_checksum_;  // already_committed
  std::optional<std::string> committed_here_;      // under mutex_
  std::string far_end(const Connection& control) const { return far_end_.empty() ? control.peer() : far_end_; }
};

}  // namespace pxfer::transfer
