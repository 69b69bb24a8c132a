#pragma once
// The client API: one file in either direction. Plain structs in, a summary out; the CLI only
// parses options into these.
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "pxfer/checksum.hpp"
#include "pxfer/progress_listener.hpp"
#include "pxfer/compression.hpp"
#include "pxfer/error.hpp"
#include "pxfer/limits.hpp"
#include "pxfer/rate_meter.hpp"
#include "pxfer/retry.hpp"
#include "pxfer/socket_tuning.hpp"
#include "pxfer/stream_meter.hpp"
#include "pxfer/url.hpp"

namespace pxfer {

// Chosen by measurement (bench/results/block-size.md): large enough that per-block costs vanish,
// small enough that 4-8 streams share a 100 MiB file evenly. Their home is pxfer/limits.hpp.
inline constexpr std::uint32_t default_block_size = limits::default_block_size;
inline constexpr std::uint16_t default_streams = limits::default_streams;

struct ClientOptions {
  std::uint16_t streams = default_streams;  // fixed (-p N); with auto_streams, where auto starts
  bool auto_streams = false;      // -p auto: the stream controller adds and retires streams (pxfer/stream_count.hpp)
  std::uint16_t max_streams = 0;  // auto's ceiling per file (0 = limits::max_streams)
  std::uint32_t block_size = default_block_size;
  std::uint32_t window = 0;  // 0 = kernel autotuning
  std::string congestion;          // "" = the system default
  std::uint32_t window_clamp = 0;  // 0 = none
  bool stream_stats = false;       // per-stream TCP figures each interval (from the sending side)
  CompressionSetting compression;  // applied by whichever side sends
  ChecksumAlgo checksum = ChecksumAlgo::adler32;
  bool overwrite = false;
  std::chrono::milliseconds perf_interval{1000};
  std::chrono::milliseconds connect_timeout{15000};
  unsigned threads = 0;  // 0 = one per core, at most one per stream
  // A data stream that hears nothing for this long is replaced (its blocks go to the others).
  std::chrono::milliseconds stall_timeout{60000};
  bool resume = true;   // pick up a partial file an interrupted attempt left (--no-resume: start over)
  bool sync = false;    // the receiver makes every block durable before acknowledging it
  // --retries: further attempts of a failed transfer, each resuming from what the receiver kept;
  // the same for one file and for each file of a batch (pxfer/retry.hpp says which failures).
  RetryPolicy retry;
  bool encrypt = false;  // TLS on every data stream too (the control connection always has it)
  // A file of one block moves on the control connection (no data connection of its own): set by
  // put -r / get -r, whose workers keep their control connection from file to file.
  bool small_files_on_control = false;
  // A get writes only beneath this directory, through its descriptor, following no symlink
  // (get -r: the target the user named; the server chose the names below it). "" = as typed.
  std::string local_root;
  // A get first removes temporary files that interrupted gets left in its destination directory
  // once they are older than this and no running transfer holds them (--partial-max-age).
  std::chrono::seconds partial_max_age{7 * 24 * 3600};
};

// Credentials and trust: set by the CLI (set_client_security) before any transfer; each session
// keeps the settings in force when it was made. docs/security.md.
struct ClientSecurity {
  std::string ca_file;           // verify the server's chain and host name against this CA
  std::string fingerprint;       // "sha256:HEX": pin the server's certificate explicitly
  std::string known_hosts_file;  // "" = default_known_hosts_file() (trust on first use)
  std::string token;             // secret: sent only over TLS after the server is verified, never printed
  std::string cert_file, key_file;  // client certificate for mutual TLS
};
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
  TransferSummary put(const std::string& local, const Url& remote, const ClientOptions& options,
                      ProgressListener* listener = nullptr);
  TransferSummary get(const Url& remote, const std::string& local, const ClientOptions& options,
                      ProgressListener* listener = nullptr);
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

// Moves one file in a session of its own; throws pxfer::Error with a one-line message on failure.
TransferSummary put_file(const std::string& local, const Url& remote, const ClientOptions& options,
                         ProgressListener* listener = nullptr);
TransferSummary get_file(const Url& remote, const std::string& local, const ClientOptions& options,
                         ProgressListener* listener = nullptr);

}  // namespace pxfer
