#pragma once
// The client API: one file in either direction. Plain structs in, a summary out; the CLI only
// parses options into these.
#include "pxfer/client/layer.hpp"
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "pxfer/core/checksum.hpp"
#include "pxfer/core/client_options.hpp"
#include "pxfer/engine/progress_listener.hpp"
#include "pxfer/core/compression.hpp"
#include "pxfer/common/error.hpp"
#include "pxfer/core/limits.hpp"
#include "pxfer/core/rate_meter.hpp"
#include "pxfer/core/retry.hpp"
#include "pxfer/io/socket_tuning.hpp"
#include "pxfer/core/stream_meter.hpp"
#include "pxfer/common/url.hpp"

namespace pxfer {

void set_client_security(ClientSecurity security);
// $XDG_CONFIG_HOME/pxfer/known_hosts, else ~/.config/pxfer/known_hosts.
std::string default_known_hosts_file();
// "SHA256:AB:CD.." / "sha256:abcd.." -> "sha256:abcd..", "" when not a SHA-256 fingerprint.
std::string normalize_fingerprint(const std::string& text);

struct RemoteSum {
  std::uint64_t size = 0;
  std::string value;  // lower-case hex; empty when the size was not the one asked about
};

// A client's connection to servers, kept across transfers so that many files in a row do not each
// pay for a TLS handshake, HELLO, AUTH and a new set of threads: the control connection to the
// last server used stays open for the next transfer to the same server (OPEN again after RESULT).
// One transfer at a time; use one session per thread. Throws like put_file/get_file.
// A file for ClientSession::move_small (paths as they are: no "into this directory" expansion),
// and how its one attempt ended.
struct SmallFile {
  Direction direction = Direction::put;
  std::string local;
  Url remote;
  // A get into a directory this run made (get -r): nothing was under the file's name to check for
  // or clear away first (SinkOptions::new_directory).
  bool new_directory = false;
};
struct SmallOutcome {
  // fallback: the server cannot take it whole in one frame (an older pxferd, a file over
  // limits::max_small_file by now); move it with put/get.
  enum class Kind { done, failed, fallback } kind = Kind::failed;
  TransferSummary summary;     // done
  std::optional<Error> error;  // failed
};
using SmallDone = std::function<void(std::size_t index, SmallOutcome outcome)>;

class ClientSession {
 public:
  explicit ClientSession(const ClientOptions& options);  // options.threads / streams size the pool
  // With credentials and trust of its own instead of the process's (set_client_security): pxferd
  // as a third-party copy's active end, one session per copy.
  ClientSession(const ClientOptions& options, ClientSecurity security);
  ~ClientSession();
  ClientSession(const ClientSession&) = delete;
  ClientSession& operator=(const ClientSession&) = delete;
  // One attempt, whatever options.retry says: the retries are the orchestrator's
  // (pxfer/client/retrying.hpp: put_retrying, get_retrying). `attempt` numbers it in the summary.
  TransferSummary put(const std::string& local, const Url& remote, const ClientOptions& options,
                      ProgressListener* listener = nullptr, unsigned attempt = 1);
  TransferSummary get(const Url& remote, const std::string& local, const ClientOptions& options,
                      ProgressListener* listener = nullptr, unsigned attempt = 1);
  // Small files, all to or from one server, pipelined on the kept control connection: each moves
  // whole in one frame (PUT_SMALL / GET_SMALL, docs/protocol.md "Small files"), many in flight, no
  // data streams and no round trip of its own. One attempt each (the caller retries, with put/get);
  // `done(i, outcome)` hears of files[i] as its answer arrives, from the session's thread.
  void move_small(const std::vector<SmallFile>& files, const ClientOptions& options, const SmallDone& done);
  // A file's size on the server and, when it has `size` bytes, its checksum (read there in full;
  // --skip-existing). Throws Error(not_found) when there is no such file.
  RemoteSum remote_sum(const Url& remote, ChecksumAlgo algo, std::uint64_t size, std::chrono::milliseconds connect_timeout);
  // From any thread: the transfer running now fails as if its control connection were lost (a
  // receiver keeps its partial file for a resume); the session is not for further use. pxferd
  // calls it when the client steering a third-party copy goes away.
  void abort();
  // Whether this session's TLS handshake reached `remote`'s server and its certificate passed the
  // check (--fingerprint, --ca or known_hosts): text from before that point is not a pxfer
  // server's and is not shown (pxferd's third-party copies, issue 34).
  bool verified(const Url& remote) const;
  // Sets a file's permission bits and mtime on the server (put --preserve); the server never
  // makes it world-writable or set-id.
  void set_remote_attributes(const Url& remote, std::uint32_t mode, std::int64_t mtime_ns,
                             std::chrono::milliseconds connect_timeout);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// Moves one file in a session of its own under options.retry (pxfer/client/retrying.hpp); throws
// pxfer::Error with a one-line message on failure.
TransferSummary put_file(const std::string& local, const Url& remote, const ClientOptions& options,
                         ProgressListener* listener = nullptr);
TransferSummary get_file(const Url& remote, const std::string& local, const ClientOptions& options,
                         ProgressListener* listener = nullptr);

}  // namespace pxfer
