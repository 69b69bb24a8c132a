#pragma once
// pxferd's transfers: admission (a slot, QUEUED frames while waiting), opening the file, OPEN_OK,
// the engine on the control connection, the data streams that ATTACH to it, and the one log line
// per transfer. Owns the registry of running transfers.
#include "pxfer/server/layer.hpp"
#include <atomic>
#include <memory>
#include <optional>
#include <vector>

#include "admission.hpp"
#include "blocking_pool.hpp"
#include "unfinished_space.hpp"
#include "metrics.hpp"
#include "net/connection.hpp"
#include "io/file_io.hpp"
#include "made_directories.hpp"
#include "pxfer/core/limits.hpp"
#include "pxfer/core/clock.hpp"
#include "pxfer/core/rate_pacer.hpp"
#include "pxfer/server/server.hpp"
#include "wire/wire.hpp"
#include "small_channels.hpp"
#include "transfer_registry.hpp"

namespace pxfer {
class CommitGroup;
}
namespace pxfer::server {

class TransferService {
 public:
  TransferService(const ServerOptions& options, const Directory& root, std::shared_ptr<Admission> admission,
                  Metrics& metrics, BlockingPool& blocking);

  // One OPEN on a control connection, to its end. A refusal is sent as ERROR and the session goes
  // on; a failure midway is sent and thrown (the control connection is in an unknown state).
  // `who` (identity and client version) goes into the accounting line.
  struct Who {
    std::string identity;
    std::string agent;
  };
  net::awaitable<void> serve(std::shared_ptr<net::Connection> control, wire::Open& open, std::uint64_t caps,
                             const Who& who);
  // PUT_SMALL / GET_SMALL (cap_small_files, small_files.cpp): the small-file requests the session
  // had read at once, after it authorized their paths (`refusals[i]` set: answered with it, not
  // served). They share one admission slot and one trip to the blocking pool; the answers come
  // back in request order, each with its request's id. A file's own failure is in its answer,
  // never thrown: the session reads the next request. Gets stop the trip once the bytes read reach
  // limits::small_batch_bytes: the answers then cover only the first requests, and the session
  // calls again with the rest (so what it holds stays near that bound whatever the files' sizes).
  net::awaitable<std::vector<wire::Message>> small_files(std::shared_ptr<net::Connection> control,
                                                          std::vector<wire::Message>& requests,
                                                          std::vector<std::optional<wire::Message>>& refusals,
                                                          const Who& who);
  // An ATTACH on a data connection (its first frame, or the next one after a stream ended on it:
  // `kept`). True when the stream ran and ended cleanly, so the connection may carry another.
  net::awaitable<bool> attach(std::shared_ptr<net::Connection> conn, const wire::Attach& attach, bool kept);
  // The small-file channels of the control sessions (cap_small_channel).
  SmallChannels& small_channels() { return small_channels_; }
  // Ends every running transfer with `why` (shutdown).
  void abort_all(const Error& why);
  // SIGTERM's drain: from now on every OPEN is refused; in_service() counts the transfers that
  // were let in before and have not ended yet (waiting for a slot or running).
  void refuse_new() { refusing_ = true; }
  // A write paced by --emulate-disk-rate gives up at `deadline` (a drain's) or now (a stop): it
  // must not keep the server from stopping. Any thread, no executor needed.
  void stop_pacing_at(Clock::time_point deadline) { pacing_stop_.at(deadline); }
  unsigned in_service() const { return in_service_; }
  // The running transfers as the metrics show them.
  struct Running {
    unsigned transfers = 0;
    std::uint64_t bytes = 0;
    unsigned streams = 0;
    bool draining = false;
  };
  Running running() const;
  // MKDIR made `path` (it did not exist): small files put into it skip the lookups of their names.
  void directory_made(const std::string& path) { made_directories_.made(path); }
  // --max-unfinished-per-identity, which streamed writes (stream_files.hpp) count against as puts do.
  UnfinishedSpace& unfinished() { return unfinished_; }
  // When a paced write gives up (stop_pacing_at): streamed writes stop with the transfers.
  const PacingStop* pacing_stop() const { return &pacing_stop_; }

 private:
  void refuse_if_draining() const;
  // Counts a request in in_service() for its lifetime (SIGTERM's drain waits for it).
  struct InService {
    explicit InService(std::atomic<unsigned>& n) : n_(n) { ++n_; }
    ~InService() { --n_; }
    std::atomic<unsigned>& n_;
  };
  // The file a transfer reads (a get) or writes (a put), opened on the blocking pool.
  struct OpenedFile {
    std::unique_ptr<FileSource> source;
    std::unique_ptr<FileSink> sink;
  };
  OpenedFile open_file(const wire::Open& open);
  // How a put's temporary file is written (OPEN's and PUT_SMALL's flags; block size and mtime with resume).
  SinkOptions sink_options(std::uint32_t flags, std::uint32_t block_size, std::int64_t source_mtime_ns);
  // A small file's admission (small_files.cpp): refused while draining, then a slot without QUEUED
  // frames (the client has other requests in flight and simply hears of this one later).
  net::awaitable<std::unique_ptr<Admission::Slot>> admit_small(std::shared_ptr<net::Connection> control,
                                                                const std::string& path);
  // One small file's work on the blocking pool: a put written, checked, made durable and
  // recorded; a get read (from `source` when the session opened it already) and digested.
  // A put's bytes written and verified into its hidden temporary; the batch commits them together.
  std::unique_ptr<FileSink> store_small(wire::PutSmall& m, wire::PutSmallOk& answer, ParentDirectories& parents);
  // Returns how many requests (from the first) it served: all, or fewer once gets read
  // limits::small_batch_bytes or at `window` (where the cached gets opened for it end).
  std::size_t serve_small(std::vector<wire::Message>& requests, std::vector<wire::Message>& answers,
                          std::vector<std::optional<Error>>& failures, const std::vector<std::size_t>& served,
                          std::vector<std::optional<FileSource>>& sources, const Who& who, std::size_t window);
  void load_small(wire::GetSmall& m, std::optional<FileSource>& source, wire::GetSmallOk& answer);
  // The puts of a trip made durable together; each recorded for a retry of its transfer id.
  void commit_small(std::vector<wire::Message>& requests, std::vector<wire::Message>& answers,
                    std::vector<std::optional<Error>>& failures, CommitGroup& group,
                    const std::vector<std::size_t>& grouped, const Who& who);
  // A batch's served files ended: their accounting lines, and failures into their answers.
  void settle_small(net::Connection& conn, std::vector<wire::Message>& requests, std::vector<wire::Message>& answers,
                    const std::vector<std::optional<Error>>& failures, const std::vector<std::size_t>& served,
                    const Who& who, Clock::time_point start);
  // The accounting line and metrics of a small file that ended.
  void account_small(net::Connection& conn, bool put, const std::string& path, std::uint32_t id, std::uint8_t checksum,
                     const Who& who, Clock::time_point start, std::uint64_t bytes, const std::string& value,
                     const std::optional<Error>& failure);
  std::shared_ptr<transfer::Transfer> open_transfer(wire::Open& open, std::uint64_t caps, boost::asio::any_io_executor ex,
                                                    OpenedFile file);
  net::awaitable<std::shared_ptr<transfer::Transfer>> open_off_thread(wire::Open& open, std::uint64_t caps);
  // Waits for an admission slot, logging the wait; `tell_client` sends it QUEUED frames meanwhile.
  // Lowers `streams` to what was granted (--max-streams-per-client) when `can_lower`.
  net::awaitable<std::unique_ptr<Admission::Slot>> wait_for_slot(std::shared_ptr<net::Connection> conn,
                                                                 const std::string& path, std::uint16_t& streams,
                                                                 bool can_lower, bool tell_client);
  // A retry (same transfer id, same identity and path) of a put still running here ends that one
  // and waits, briefly, until its file is free, so the retry resumes it instead of being refused.
  net::awaitable<void> take_over(const wire::Open& open, const std::string& owner);
  // A retry of a put that committed here already (its RESULT was lost): a transfer with every
  // block present whose COMMIT is answered from the record, or null when there is none.
  std::shared_ptr<transfer::Transfer> committed_again(const wire::Open& open, const std::string& owner,
                                                      std::uint64_t caps, boost::asio::any_io_executor ex);
  // Records a put that committed under a transfer id, with its file as it is now.
  // `owner` is the identity and the path (identity + '\n' + path): only the same client's retry matches.
  void remember_commit(const wire::Token& id, const std::string& path, const std::string& owner, std::uint64_t size,
                       std::int64_t source_mtime_ns, std::uint8_t checksum_algo, const std::string& checksum);
  wire::Message open_ok_for(const wire::Token& token, const transfer::Transfer& t, const wire::Open& open,
                            std::uint64_t caps) const;

  const ServerOptions& options_;
  const Directory& root_;
  std::shared_ptr<Admission> admission_;
  Metrics& metrics_;
  PacingStop pacing_stop_;  // when a paced write gives up
  TransferRegistry registry_;
  SmallChannels small_channels_;
  MadeDirectories made_directories_{limits::made_directories_remembered};
  std::atomic<bool> refusing_{false};
  std::atomic<unsigned> in_service_{0};
  BlockingPool& blocking_;
  UnfinishedSpace unfinished_;  // --max-unfinished-per-identity
};

// The accounting line's fields that every outcome shares (id: 8 hex digits, "-" when none yet).
struct TransferAccount;
TransferAccount account_of(net::Connection& conn, const std::string& path, bool put, unsigned streams,
                           std::uint8_t checksum, const TransferService::Who& who, std::string id);
// Marks the line `result` ("failed", "refused") with the error's class and message.
void set_error(TransferAccount& a, const char* result, const Error& e);

// The client as admission control counts it: its address (an IPv4-mapped IPv6 address as IPv4).
std::string client_address(net::Connection& conn);

}  // namespace pxfer::server
