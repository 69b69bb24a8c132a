#pragma once
// What one transfer is asked to do, as plain values: the CLI, the gfal2 plugin and a third-party
// copy fill it; the pure negotiation (transfer/negotiate.hpp) turns it into an OPEN; the client
// (pxfer/client/client.hpp) runs it.
#include "pxfer/core/layer.hpp"
#include <chrono>
#include <cstdint>
#include <string>

#include "pxfer/core/checksum.hpp"
#include "pxfer/core/compression.hpp"
#include "pxfer/core/limits.hpp"
#include "pxfer/core/retry.hpp"

namespace pxfer {

// Chosen by measurement (bench/results/block-size.md): large enough that per-block costs vanish,
// small enough that 4-8 streams share a 100 MiB file evenly. Their home is pxfer/core/limits.hpp.
inline constexpr std::uint32_t default_block_size = limits::default_block_size;
inline constexpr std::uint16_t default_streams = limits::default_streams;

struct ClientOptions {
  std::uint16_t streams = default_streams;  // fixed (-p N); with auto_streams, where auto starts
  bool auto_streams = false;      // -p auto: the stream controller adds and retires streams (pxfer/core/stream_count.hpp)
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
  // the same for one file and for each file of a batch (pxfer/core/retry.hpp says which failures).
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

}  // namespace pxfer
