#pragma once
// The one table of limits on what a transfer may ask for: read by the CLI (to validate options),
// the client (to build OPEN), the codec (to refuse a frame outside them), the auto controller and
// the server. Each *_problem() returns "" when a value is within its limit, else what to use
// instead, so that every caller words a refusal the same way and names its own option.
#include "pxfer/core/layer.hpp"
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>

namespace pxfer::limits {

inline constexpr std::uint16_t min_streams = 1;
inline constexpr std::uint16_t max_streams = 64;  // data streams of one transfer
// Block sizes: below 1 MiB the per-block costs (a header, an ACK, a journal bit, a hash step)
// start to show and a claimed size buys many blocks; 16 MiB bounds a receiver's buffer per stream.
inline constexpr std::uint32_t min_block_size = 1u << 20;
inline constexpr std::uint32_t max_block_size = 16u << 20;
inline constexpr std::uint32_t default_block_size = 2u << 20;  // bench/results/block-size.md
// TCP_NOTSENT_LOWAT on data sockets: how much a sender's socket may hold not yet sent
// (src/net/socket_tuning.cpp says why).
inline constexpr std::uint32_t data_notsent_lowat = 1u << 20;
inline constexpr std::uint16_t default_streams = 4;
// The largest send buffer a data stream pins for itself when autotuning's stopped below what it
// needs (core/send_window.hpp): 64 MiB is 3.5 Gbit/s a stream at 150 ms; past it, more streams.
inline constexpr std::uint64_t max_pinned_send_buffer = 64u << 20;
// -p auto starts with this many streams and adds more while the aggregate grows (issue 39):
// the old fixed default, so a short or local transfer moves as it did.
inline constexpr std::uint16_t auto_start_streams = default_streams;
// A file of at most this many bytes moves whole in one frame on the control connection, many in
// flight at once (PUT_SMALL / GET_SMALL, cap_small_files): no data stream, no round trip of its
// own. One block at the smallest block size, so such a file is always a single block.
inline constexpr std::uint32_t max_small_file = min_block_size;
// Small-file requests a client keeps in flight on one control connection, and the file bytes of
// its PUT_SMALLs among them: enough to keep both ends busy across a round trip, little enough that
// the short answers never fill a socket buffer while the client is still sending.
inline constexpr std::uint32_t small_files_in_flight = 64;
inline constexpr std::uint32_t small_bytes_in_flight = 8u << 20;
// What pxferd holds of one connection's small files at a time: the requests it reads at once and
// serves as one batch (at most small_files_in_flight of them) carry at most this much file data
// (PUT_SMALL's bytes), and one trip of a batch stops reading gets once it read this much (the
// rest of the batch waits for the next trip), so a trip holds at most this plus one file. 1 MiB
// moved a 2,000-file put -r as fast as 4 MiB did, with pxferd's peak RSS at 28 MiB instead of 52
// (docs/performance.md section 9).
inline constexpr std::uint32_t small_batch_bytes = 1u << 20;
// Directories pxferd remembers having made for MKDIR (server/made_directories.hpp): a name each,
// ~100 bytes, so at most ~10 MB; past it the set starts again.
inline constexpr std::size_t made_directories_remembered = 100000;
// A data connection whose stream ended cleanly (END both ways) can carry the same client's next
// file: it says ATTACH again and proves the new transfer's key, so the files of a -r run share one
// set of streams instead of a TCP handshake and a cold window each (issue 12.3). pxferd waits this
// long for that ATTACH; a client takes a kept connection only while it has been idle for less than
// half of it, so it does not meet one the server is closing; and keeps at most this many.
inline constexpr std::chrono::milliseconds idle_data_stream{10'000};
inline constexpr std::size_t idle_data_streams_kept = max_streams;
// The ATTACHes with their own nonce (cap_attach_proven) a transfer takes: each nonce is kept to
// refuse its replay. A stream reconnects a handful of times at most; past this, ATTACH fails.
inline constexpr std::size_t attach_nonces_per_transfer = 4096;
// How long a client session waits, as it closes, for the streams and watchers of its last transfer
// to end (they end within a second: client/session.cpp); past it they are stopped, with a warning.
inline constexpr std::chrono::milliseconds client_wind_down{10'000};
// Block buffers a process keeps after its streams ended, for the next ones (transfer/block_buffer.hpp):
// enough for 8 files of 2 streams at the default block size, the -r run where it matters.
inline constexpr std::size_t kept_block_buffer_bytes = 32u << 20;
// A session whose credential a reload revoked is told why (an ERROR frame) and closed at the
// latest this long after the reload (server/live_sessions.hpp): a client that does not read its
// control connection cannot hold the session open (issue 34: ended within a second).
inline constexpr std::chrono::milliseconds revoked_session_close{300};

// pxferd --metrics-listen (server/metrics_http.cpp): a scraper has this long for its whole
// request and our answer, however slowly it trickles bytes; at most this many scrapers are served
// at once (each costs a socket and a few KiB) and a request head may be at most this large. A
// Prometheus scrape is one small GET every few seconds, far inside all three.
inline constexpr std::chrono::milliseconds metrics_request_deadline{5'000};
inline constexpr std::size_t metrics_connections = 16;
inline constexpr std::uint32_t metrics_request_head_bytes = 8u << 10;
// --metrics-per-identity (issue 35): a grid identity (a DN with its FQAN, token:SUB@ISSUER) is a
// label of at most this many bytes (a longer one keeps its start and a hash of the whole), and
// identities beyond this many share the label "(other)": a scrape stays bounded whoever logs in.
inline constexpr std::size_t metrics_identity_label_bytes = 128;
inline constexpr std::size_t metrics_identities = 1000;

// Token issuers without a key_file (issue 35): their keys come from the issuer's JWKS over HTTPS.
// One fetch (openid-configuration, then jwks_uri) has this long; keys are fetched again after
// jwks_refresh, and kept while refreshes fail for at most jwks_max_age (then that issuer's tokens
// are refused); a token with a key id the keys lack fetches again at most once per jwks_min_refetch.
inline constexpr std::chrono::milliseconds jwks_fetch_timeout{10'000};
inline constexpr std::chrono::seconds jwks_refresh{3600};
inline constexpr std::chrono::seconds jwks_max_age{24 * 3600};
inline constexpr std::chrono::seconds jwks_min_refetch{60};
inline constexpr std::size_t jwks_max_bytes = 1u << 20;  // an openid-configuration or JWKS document

// pxferd stopping (a second SIGTERM, or the drain's timeout): the transfers it aborts get this
// long to send their clients the ERROR that says why before every connection is closed.
inline constexpr std::chrono::milliseconds stop_error_grace{1'000};

// Before a connection has proven who it is (HELLO, AUTH, ATTACH, ATTACH_PROOF, or a PING between
// kept streams), pxferd reads only those frames and only this many payload bytes of each: the
// largest (HELLO with its 1 KiB agent text) is far below it. Any other first frame is refused
// before its payload is read, so a connection that never logs in costs a few KiB, not the 1 MiB
// a small file's frame may carry (issue 34: 600 such connections took pxferd to 677 MiB).
inline constexpr std::uint32_t max_login_frame = 4096;
// Connections pxferd keeps open that have not logged in yet (all addresses together). A login
// takes milliseconds, so one more connection closes the oldest of them, as does reaching
// --max-connections or --max-connections-per-address: a crowd of idle connections from a few
// addresses never locks out a client that logs in (server/listener.hpp).
inline constexpr std::size_t max_connections_logging_in = 1024;
// Threads of pxferd's blocking pool (SUM, LIST, opening files) beyond ServerOptions::blocking_threads, kept for
// an identity that has nothing running there: however long two identities' SUMs take, a third
// identity's LIST starts at once (policy/fair_share.hpp, issue 34).
inline constexpr unsigned blocking_workers_kept_free = 1;

// A put's space is reserved (fallocate) as its bytes come, at most this far ahead of the furthest
// write, never all of the claimed size at OPEN: an idle OPEN of a huge claim holds this much, not
// the whole file system (issue 34: one idle 954 MiB claim made every other put on a 1 GiB file
// system fail for ~13 s). A full file system still fails a put within a window of its last write.
inline constexpr std::uint64_t reservation_window = 64ull << 20;

// Streamed I/O (STREAM_OPEN ..., the gfal2 plugin's open/read/write): the bytes one STREAM_READ
// may ask for and one STREAM_WRITE may carry (the plugin reads ahead by this much, so gfal-cat
// makes one round trip per 4 MiB), and the files one control session may hold open at once (each
// costs pxferd a descriptor, and a write a temporary file).
inline constexpr std::uint32_t max_stream_chunk = 4u << 20;
inline constexpr std::uint32_t stream_handles_per_session = 16;

// Bounds of the client's options (pxfer/core/option_table.hpp checks every one of them, for the
// CLI, the gfal2 plugin and check()): further attempts of a failed file (each waits up to a minute);
// socket buffers and TCP_WINDOW_CLAMP (1 GiB is past any path's bandwidth-delay product, and
// past it the kernel's int arithmetic misbehaves); how long a silent data stream is kept (below
// 500 ms a busy receiver's fsync looks like a stall); the time between rate lines; the age at
// which a get removes leftovers of interrupted gets; the wait for a server to answer; a TCP
// congestion control's name (TCP_CA_NAME_MAX is 16 with its NUL). The client's one retry
// orchestrator (pxfer/client/retrying.hpp) also refuses a policy over max_retries, whoever made
// it: 20 retries at the 60 s longest pause already keep a command going a quarter of an hour.
inline constexpr std::uint64_t max_retries = 20;
inline constexpr std::uint64_t max_window = 1ull << 30;
inline constexpr std::chrono::milliseconds min_stall_timeout{500};
inline constexpr std::chrono::milliseconds max_stall_timeout{3'600'000};
inline constexpr std::chrono::milliseconds min_perf_interval{50};
inline constexpr std::chrono::milliseconds max_perf_interval{3'600'000};
inline constexpr std::chrono::milliseconds min_partial_max_age{1'000};
inline constexpr std::chrono::milliseconds max_partial_max_age{366LL * 24 * 3'600'000};
inline constexpr std::chrono::milliseconds min_connect_timeout{100};
inline constexpr std::chrono::milliseconds max_connect_timeout{3'600'000};
inline constexpr std::size_t max_congestion_name = 15;

// Blocks of a file of `size` bytes: the last may be shorter; an empty file has none.
constexpr std::uint64_t block_count(std::uint64_t size, std::uint32_t block_size) {
  return block_size == 0 ? 0 : size / block_size + (size % block_size != 0);
}

// No more data streams than blocks, and at least one: a small file needs one connection.
constexpr std::uint16_t streams_for(std::uint64_t size, std::uint32_t block_size, std::uint16_t asked) {
  const std::uint64_t blocks = block_count(size, block_size);
  return static_cast<std::uint16_t>(blocks == 0 ? 1 : blocks < asked ? blocks : asked);
}

inline std::string streams_problem(std::uint64_t streams) {
  return streams < min_streams || streams > max_streams ? "use 1 to 64" : "";
}
inline std::string block_size_problem(std::uint64_t block_size) {
  return block_size < min_block_size || block_size > max_block_size ? "use 1M to 16M" : "";
}

}  // namespace pxfer::limits
