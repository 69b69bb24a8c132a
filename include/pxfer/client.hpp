#pragma once
// The client API: one file in either direction. Plain structs in, a summary out; the CLI only
// parses options into these.
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "pxfer/checksum.hpp"
#include "pxfer/compression.hpp"
#include "pxfer/error.hpp"
#include "pxfer/rate_meter.hpp"
#include "pxfer/socket_tuning.hpp"
#include "pxfer/stream_meter.hpp"
#include "pxfer/url.hpp"

namespace pxfer {

// Chosen by measurement (bench/results/block-size.md): large enough that per-block costs vanish,
// small enough that 4-8 streams share a 100 MiB file evenly.
inline constexpr std::uint32_t default_block_size = 2u << 20;
inline constexpr std::uint16_t default_streams = 4;

struct ClientOptions {
  std::uint16_t streams = default_streams;
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
  unsigned retries = 0;                           // further attempts of a failed transfer, each resuming
  std::chrono::milliseconds first_backoff{1000};  // before the first retry; doubled each time, with jitter
  bool encrypt = false;  // TLS on every data stream too (the control connection always has it)
  // A file of one block moves on the control connection (no data connection of its own): set by
  // put -r / get -r, whose workers keep their control connection from file to file.
  bool small_files_on_control = false;
  // A get writes only beneath this directory, through its descriptor, following no symlink
  // (get -r: the target the user named; the server chose the names below it). "" = as typed.
  std::string local_root;
};

// Credentials and trust, the same for every connection of a process: set once by the CLI
// (set_client_security) before any transfer. docs/security.md.
struct ClientSecurity {
  std::string ca_file;           // verify the server's chain and host name against this CA
  std::string fingerprint;       // "sha256:HEX": pin the server's certificate explicitly
  std::string known_hosts_file;  // "" = default_known_hosts_file() (trust on first use)
  std::string token;             // secret: sent only over TLS after the server is verified, never printed
  std::string cert_file, key_file;  // client certificate for mutual TLS
};
void set_client_security(ClientSecurity security);
const ClientSecurity& client_security();
// $XDG_CONFIG_HOME/pxfer/known_hosts, else ~/.config/pxfer/known_hosts.
std::string default_known_hosts_file();
// "SHA256:AB:CD.." / "sha256:abcd.." -> "sha256:abcd..", "" when not a SHA-256 fingerprint.
std::string normalize_fingerprint(const std::string& text);

enum class Direction { put, get };

// The server's load when it admitted the transfer (OPEN_OK, from servers with cap_admission).
struct ServerLoad {
  bool known = false;
  unsigned active = 0;      // transfers moving data, this one included
  unsigned queued = 0;      // transfers waiting
  unsigned max_active = 0;  // 0 = no limit
};

struct TransferSummary {
  Direction direction = Direction::get;
  std::string source;       // as shown in the "Source:" line
  std::string destination;  // as shown in the "Dest:" line
  std::uint64_t bytes = 0;
  double seconds = 0;
  std::uint16_t streams = 0;
  std::uint32_t block_size = 0;
  ChecksumAlgo checksum = ChecksumAlgo::adler32;
  std::string checksum_value;
  BufferGrant local_buffers;   // of the first data stream
  BufferGrant remote_buffers;
  std::vector<std::string> warnings;
  std::string congestion;                   // in use on the data streams
  CompressionSetting compression;
  std::uint64_t wire_bytes = 0;             // block payload on the wire (less than bytes when compressed)
  std::vector<StreamTotals> stream_totals;  // with --stream-stats
  std::uint64_t resumed_bytes = 0;          // already at the receiver from an earlier attempt: not sent
  std::uint64_t stream_recoveries = 0;      // data streams that broke or stalled and were replaced
  unsigned attempts = 1;                    // 1 + retries used
  // "control TLS1.3 (TLS_AES_256_GCM_SHA384), data clear" or "..., data TLS1.3 (...)"
  std::string protection;
  std::string identity;  // who the server says we are (token name, certificate CN, anonymous)
  ServerLoad server_load;
};

// Receives progress while a transfer runs (from one thread at a time).
class ProgressListener {
 public:
  virtual ~ProgressListener() = default;
  virtual void on_start(const TransferSummary&) {}
  virtual void on_interval(const IntervalReport&) {}
  virtual void on_finish(const IntervalReport&, const TransferSummary&) {}
  virtual void on_warning(const std::string&) {}
  // The server holds the transfer in line (pxferd --max-active) before it starts.
  virtual void on_queued(unsigned /*position*/, unsigned /*active*/, unsigned /*queued*/) {}
  // A data stream broke or stalled; its blocks went to the other streams and it reconnects.
  virtual void on_stream_event(const std::string&) {}
  // The attempt failed with `reason`; attempt `next` of `total` starts in `delay_seconds`.
  virtual void on_retry(unsigned /*next*/, unsigned /*total*/, double /*delay_seconds*/, const std::string& /*reason*/) {}
};

// Whether another attempt of a failed transfer may succeed: not for bad input, a refusal, a
// missing file, an existing destination or a local error such as a full disk or Ctrl-C.
bool worth_retrying_transfer(Errc code);

struct RemoteSum {
  std::uint64_t size = 0;
  std::string value;  // lower-case hex; empty when the size was not the one asked about
};

// A client's connection to servers, kept across transfers so that many files in a row do not each
// pay for a TLS handshake, HELLO, AUTH and a new set of threads: the control connection to the
// last server used stays open for the next transfer to the same server (OPEN again after RESULT).
// One transfer at a time; use one session per thread. Throws like put_file/get_file.
class ClientSession {
 public:
  explicit ClientSession(const ClientOptions& options);  // options.threads / streams size the pool
  ~ClientSession();
  ClientSession(const ClientSession&) = delete;
  ClientSession& operator=(const ClientSession&) = delete;
  TransferSummary put(const std::string& local, const Url& remote, const ClientOptions& options,
                      ProgressListener* listener = nullptr);
  TransferSummary get(const Url& remote, const std::string& local, const ClientOptions& options,
                      ProgressListener* listener = nullptr);
  // A file's size on the server and, when it has `size` bytes, its checksum (read there in full;
  // --skip-existing). Throws Error(not_found) when there is no such file.
  RemoteSum remote_sum(const Url& remote, ChecksumAlgo algo, std::uint64_t size, std::chrono::milliseconds connect_timeout);
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
