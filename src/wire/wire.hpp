#pragma once
// The wire format: length-prefixed frames and the messages they carry. Pure functions over byte
// spans, no I/O, so the decoder can be unit-tested and fuzzed. docs/protocol.md describes it.
#include "pxfer/core/layer.hpp"
#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "pxfer/core/limits.hpp"
#include "pxfer/core/wire_types.hpp"
#include "wire/blob.hpp"
#include "wire/capabilities.hpp"
#include "wire/sizes.hpp"
#include "wire/small_messages.hpp"
#include "wire/stream_messages.hpp"

namespace pxfer::wire {

// Sizes and limits of frames and fields (wire/sizes.hpp); the small-file messages (wire/small_messages.hpp).

enum class FrameType : std::uint16_t {
  hello = 1,      // client -> server, first frame of a control connection
  hello_ok = 2,
  open = 3,       // client -> server: start a transfer (put or get) of one file
  open_ok = 4,
  attach = 5,     // client -> server, first frame of a data connection
  attach_ok = 6,
  block = 7,      // sender -> receiver on a data connection: block header + data
  ack = 8,        // receiver -> sender on a data connection: block written
  end = 9,        // sender -> receiver on a data connection: no more blocks on this stream
  commit = 10,    // sender -> receiver on the control connection: bytes and whole-file checksum
  result = 11,    // receiver -> sender on the control connection: verdict of the commit
  error = 12,     // either way, either connection: the transfer failed, with a reason
  ping = 13,      // RTT measurement and keepalive
  pong = 14,
  stats = 15,     // sender -> receiver on the control connection: per-stream TCP figures
  info_request = 16,  // client -> server: what are your TCP settings? (pxfer doctor)
  info = 17,          // server -> client: key/value pairs
  remove = 18,        // client -> server: delete a file below the export root
  done = 19,          // server -> client: a request without a transfer succeeded
  list = 20,          // client -> server: every file and directory below a path
  listing = 21,       // server -> client: part of the answer to LIST (more = 1: another follows)
  mkdir = 22,         // client -> server: create a directory and its parents
  queued = 23,        // server -> client after OPEN: waiting for a slot (pxferd --max-active)
  auth = 24,          // client -> server, right after HELLO: credentials (a token, or none)
  auth_ok = 25,       // server -> client: who the client is and what it may do
  have = 30,          // receiver -> sender on the control connection after OPEN_OK: blocks it
                      // already holds from an interrupted transfer (resume); more = 1: another follows
  sum = 31,             // client -> server: the whole-file checksum of a file (--skip-existing)
  sum_ok = 32,          // server -> client: its size and checksum
  set_attributes = 33,  // client -> server: a file's permission bits and mtime (put --preserve)
  stat = 34,            // client -> server: what one name is (file or directory), without its contents
  stat_ok = 35,         // server -> client: the answer to STAT
  rename = 36,          // client -> server: move a name to another below the same export root (atomic)
  remove_tree = 37,     // client -> server: delete a file or a directory (its contents too when recursive)
  list_children = 38,   // client -> server: one directory's own entries (answered with LISTING frames)
  attach_challenge = 39,  // server -> client after ATTACH: a fresh nonce the data stream must answer
  attach_proof = 40,      // client -> server: HMAC of the nonce, transfer and stream (block_mac.hpp)
  // Third-party copy (cap_tpc): a client steers a copy between two servers.
  tpc_grant_request = 41,  // client -> the server the other one will connect to: a one-time grant
  tpc_grant = 42,          // server -> client: the grant's secret and lifetime
  tpc_start = 43,          // client -> the server that connects: copy to/from the peer with the grant
  tpc_progress = 44,       // that server -> client, each interval: bytes moved so far
  tpc_done = 45,           // that server -> client: the copy committed (both ends' checksums agreed)
  // Small files (cap_small_files): a whole file in one frame, many in flight on one control connection.
  put_small = 46,   // client -> server: a file's bytes, its digest and where it goes
  put_small_ok = 47,  // server -> client: the verdict on one PUT_SMALL (by id)
  get_small = 48,   // client -> server: send me this file whole
  get_small_ok = 49,  // server -> client: the file's bytes and digest, or why not (by id)
  // Small files' bytes on a data connection (cap_small_channel): the control connection keeps the
  // requests and answers, one authenticated clear connection beside it carries the bytes.
  small_channel = 50,     // client -> server: a channel for this control connection's small files
  small_channel_ok = 51,  // server -> client: the token the channel's ATTACH names
  small_data = 52,        // on the channel, either way: one small file's bytes and their Poly1305 tag
  // Streamed I/O (cap_stream_io, wire/stream_messages.hpp): a file read or written piecewise.
  stream_open = 53,     // client -> server: open a file for reading or for writing a new one
  stream_open_ok = 54,  // server -> client: its handle (and size, for a read)
  stream_read = 55,     // client -> server: bytes at an offset of a handle
  stream_data = 56,     // server -> client: those bytes
  stream_write = 57,    // client -> server: bytes at an offset of a write handle (DONE)
  stream_close = 58,    // client -> server: release a handle; a write's file goes in place (DONE)
  // -p auto in a get (cap_retire_streams): on a data stream, receiver -> sender: send no further
  // block on this stream, END once the blocks sent are acknowledged.
  retire = 59,
};

enum class Direction : std::uint8_t { put = 1, get = 2 };
enum OpenFlags : std::uint32_t {
  open_overwrite = 1u << 0,
  open_want_stats = 1u << 1,  // the sender reports per-stream TCP figures (STATS) each interval
  open_no_resume = 1u << 2,   // the receiver discards any partial file and starts over
  open_sync = 1u << 3,        // the receiver makes each block durable (fdatasync) before its ACK
  open_encrypt = 1u << 4,     // every data stream of this transfer must use TLS (pxfer --encrypt)
  open_on_control = 1u << 5,  // a file of one block moves on the control connection (cap_on_control)
};
inline constexpr std::uint32_t known_open_flags =
    open_overwrite | open_want_stats | open_no_resume | open_sync | open_encrypt | open_on_control;

// Whether a transfer moves on its control connection instead of data streams: the client asked
// (open_on_control, offered only when both ends confirmed cap_on_control) and the file is one
// block (or empty). Both ends decide the same from OPEN's flags and OPEN_OK's size and block size.
constexpr bool moves_on_control(std::uint32_t open_flags, std::uint64_t size, std::uint32_t block_size) {
  return (open_flags & open_on_control) != 0 && size <= block_size;
}
// AUTH token text: a pxfer token (64 hex digits) or a WLCG JWT, which the WLCG profile keeps
// well below this; an identity may be a grid DN with a VOMS FQAN.
inline constexpr std::size_t max_auth_token = 8192;
inline constexpr std::size_t max_identity_length = 1024;
enum AuthRights : std::uint8_t { right_read = 1u << 0, right_write = 1u << 1 };
// block_copy: a second copy of a block whose first is overdue on another stream (cap_block_copies);
// the receiver only counts it, for the summary.
enum BlockFlags : std::uint32_t { block_compressed_zstd = 1u << 0, block_copy = 1u << 1 };


struct FrameHeader {
  FrameType type{};
  std::uint16_t flags = 0;
  std::uint32_t length = 0;  // payload bytes after the 8-byte header
};

struct Hello {
  std::uint16_t version = protocol_version;
  std::uint16_t min_version = protocol_version;
  std::uint64_t capabilities = our_capabilities;
  std::string agent;
};
struct HelloOk {
  std::uint16_t version = protocol_version;
  std::uint64_t capabilities = our_capabilities;
  std::string agent;
  std::uint32_t max_block = max_block_size;
};
struct Open {
  Direction direction = Direction::get;
  std::uint8_t checksum = 0;  // pxfer::ChecksumAlgo
  std::uint32_t flags = 0;
  std::uint16_t streams = 1;
  std::uint32_t block_size = 0;
  std::uint32_t window = 0;  // requested socket buffer on the server's data sockets, 0 = autotune
  std::uint64_t size = 0;    // file size, for a put
  std::string path;
  std::string congestion;          // TCP_CONGESTION for the data sockets, "" = system default
  std::uint32_t window_clamp = 0;  // TCP_WINDOW_CLAMP for the data sockets, 0 = none
  std::uint32_t stats_interval_ms = 0;  // with open_want_stats
  std::uint8_t compress_mode = 0;       // pxfer::CompressMode, for the sender
  std::uint8_t compress_level = 0;
  std::int64_t mtime_ns = 0;            // the source's mtime, for a put: with size, what a resume must match
  std::uint32_t stall_timeout_ms = 0;   // a data stream without progress this long is replaced; 0 = default
  // Optional trailing field: an id the client draws once per file and keeps across its retries, so
  // the server can tell a retry of a transfer it already committed (or still runs) from a new one.
  bool has_transfer_id = false;
  Token transfer_id{};
};
struct OpenOk {
  Token token{};
  std::uint64_t size = 0;  // file size, for a get
  std::uint32_t block_size = 0;
  std::int64_t mtime_ns = 0;  // the source's mtime, for a get
  // Sent only when both ends offered cap_admission; an older peer gets the four fields above.
  bool has_admission = false;
  std::uint16_t streams = 0;      // data streams granted (1..max_streams): the client opens this many
  std::uint32_t active = 0;       // the server's load when it answered: transfers moving data,
  std::uint32_t queued = 0;       // transfers waiting,
  std::uint32_t max_active = 0;   // and its --max-active (0 = no limit)
  // Second tail, only when both ends offered cap_sender_congestion (and so after the first): the
  // TCP congestion control of the server's data sockets ("bbr", "cubic"; "" when it cannot tell).
  bool has_congestion = false;
  std::string congestion = {};
};
// Blocks the receiver already holds: bit i (least significant bit of byte i / 8 first) stands for
// block first_block + i. A receiver sends at least one HAVE (possibly empty) after OPEN_OK.
inline constexpr std::size_t max_have_bytes = 60000;
struct Have {
  std::uint8_t more = 0;
  std::uint32_t first_block = 0;
  std::vector<std::uint8_t> bitmap;  // at most max_have_bytes
};
// The token names the transfer; since version 3 it is no credential (it crosses clear data
// streams): the stream proves itself with ATTACH_PROOF, under a key only the two ends of the
// control connection's TLS session can compute.
struct Attach {
  Token token{};
  std::uint16_t stream = 0;
  // Tail, sent only to a server with cap_attach_proven: the proof comes with ATTACH, under a nonce
  // the client drew, instead of answering an ATTACH_CHALLENGE (one round trip less before a
  // stream's first block: 150 ms on a long path, for every file). The server takes each nonce
  // once per transfer, so a copied ATTACH joins nothing.
  bool has_proof = false;
  std::array<std::uint8_t, attach_nonce_size> nonce{};
  std::array<std::uint8_t, attach_proof_size> mac{};
};
struct AttachChallenge {
  std::array<std::uint8_t, attach_nonce_size> nonce{};
};
struct AttachProof {
  std::array<std::uint8_t, attach_proof_size> mac{};
};
struct AttachOk {
  std::uint32_t sndbuf = 0;  // what the kernel granted on the server's socket
  std::uint32_t rcvbuf = 0;
};
struct Ack {
  std::uint64_t offset = 0;
  std::uint32_t length = 0;
};
struct End {};
struct Retire {};  // no fields: the stream it arrives on is the one to end
struct Commit {
  std::uint64_t bytes = 0;
  std::uint8_t checksum = 0;
  std::string value;  // hex digest as printed
};
struct Result {
  std::uint16_t code = 0;  // pxfer::Errc
  std::string value;       // the receiver's digest
  std::string message;
};
struct ErrorMsg {
  std::uint16_t code = 0;  // pxfer::Errc
  std::string message;
};
using pxfer::StreamFigures;  // public: pxfer/core/wire_types.hpp
struct Stats {
  std::vector<StreamFigures> streams;  // at most max_streams
};
struct Remove {
  std::string path;
};
struct Done {};
using pxfer::EntryKind;  // public: pxfer/core/wire_types.hpp
// One name below the directory a LIST named; relative_path is relative to that directory.
struct ListEntry {
  EntryKind kind = EntryKind::file;
  std::uint64_t size = 0;
  std::uint32_t mode = 0;  // permission bits (st_mode & 07777)
  std::int64_t mtime_ns = 0;
  std::string relative_path;  // <= max_path_length; "" when LIST named a file
  bool operator==(const ListEntry&) const = default;
};
inline constexpr std::size_t max_list_entries = 100000;  // per LIST answer, over all its frames
// Encoded sizes, so that split_listing fills frames exactly: the smallest entry (kind, size,
// mode, mtime and an empty path's length), and a LISTING's fields before its entries (more, count).
inline constexpr std::size_t min_entry_bytes = 1 + 8 + 4 + 8 + 2;
inline constexpr std::size_t listing_header_bytes = 1 + 4;
struct List {
  std::string path;  // "" or "." = the export root
};
struct Listing {
  std::uint8_t more = 0;  // 1: another LISTING frame follows
  std::vector<ListEntry> entries;
};
struct Mkdir {
  std::string path;
};
struct Queued {
  std::uint32_t position = 0;  // 1 = next
  std::uint32_t active = 0;    // transfers moving data on the server now
  std::uint32_t queued = 0;    // transfers waiting, this one included
};
// Credentials after HELLO_OK. An empty token means "none": the server then relies on the client
// certificate of the TLS connection, or on anonymous access if it allows it.
struct Auth {
  std::string token;  // <= max_auth_token
};
struct AuthOk {
  std::string identity;    // token name, certificate CN, or "anonymous"
  std::uint8_t rights = 0; // AuthRights, over the whole export (an access file may narrow it per path)
};
// --skip-existing compares a file's size and checksum at both ends before moving it.
// The server reads the file only when it has `size` bytes; otherwise SUM_OK has its size and an
// empty value (a different size settles the question without reading anything).
struct Sum {
  std::string path;
  std::uint8_t checksum = 1;  // pxfer::ChecksumAlgo other than none
  std::uint64_t size = 0;
};
struct SumOk {
  std::uint64_t size = 0;
  std::string value;  // lower-case hex, as COMMIT carries it; empty when the size differed
};
// put --preserve: after the file is in place. The server applies mode & 0775 (never world-writable,
// no set-id bits) and the mtime; the answer is DONE or ERROR.
struct SetAttributes {
  std::string path;
  std::uint32_t mode = 0;
  std::int64_t mtime_ns = 0;
};
// pxfer stat, the gfal2 plugin's stat: one name's kind, size, mode and mtime ("" or "." = the
// export root). The answer is STAT_OK (its entry's relative_path empty) or ERROR.
struct Stat {
  std::string path;
};
struct StatOk {
  ListEntry entry;
};
// pxfer mv: renameat2 below the export root; without overwrite an existing target is refused
// (Errc::exists). Both names must be writable for the identity. The answer is DONE or ERROR.
struct Rename {
  std::string from;
  std::string to;
  std::uint8_t overwrite = 0;  // 0 or 1
};
// pxfer rm [-r], gfal-rm, rmdir: a file, or a directory (empty unless recursive; the tree is
// walked through descriptors and never follows a symlink). The export root itself is refused.
struct RemoveTree {
  std::string path;
  std::uint8_t recursive = 0;  // 0 or 1
};
// pxfer ls without -r, gfal-ls: the names directly in a directory, answered like LIST (LISTING
// frames, or a listing of one with an empty relative_path when `path` is a file), so a directory
// with a large tree below it is listed without walking the tree (cap_namespace).
struct ListChildren {
  std::string path;
};
// Third-party copy (docs/protocol.md "Third-party copy"). The client asks the PASSIVE server (the
// one the other will connect to) for a grant: a random secret, good for one AUTH within its
// lifetime, that admits exactly one OPEN of `path` in `direction` (put: the peer writes `size`
// bytes there, open_overwrite only if `flags` has it; get: the peer reads it). The steering
// identity must itself be allowed that access. The answer is TPC_GRANT or ERROR.
inline constexpr std::size_t max_grant_length = 128;
struct TpcGrantRequest {
  Direction direction = Direction::put;  // what the peer will do here
  std::uint32_t flags = 0;               // open_overwrite
  std::uint64_t size = 0;                // put: the bytes the peer will write
  std::string path;
};
struct TpcGrant {
  std::string secret;                 // presented by the peer as its AUTH token
  std::uint32_t lifetime_ms = 0;      // the peer must log in before it runs out
};
// To the ACTIVE server: pull = it fetches `peer_url` into `local_path`, push = it sends
// `local_path` to `peer_url`, logging in there with `grant` and accepting only the certificate
// `peer_fingerprint` (the one the steering client verified). The steering identity must be allowed
// to write (pull) or read (push) `local_path` here, and the peer must be one this server's operator
// allows (pxferd --tpc-allow). Answered with TPC_PROGRESS frames, then TPC_DONE or ERROR.
enum class CopyMode : std::uint8_t { pull = 1, push = 2 };
struct TpcStart {
  CopyMode mode = CopyMode::pull;
  std::uint8_t checksum = 0;  // pxfer::ChecksumAlgo
  std::uint32_t flags = 0;    // open_overwrite, open_no_resume, open_sync, open_encrypt
  std::uint16_t streams = 1;
  std::uint32_t block_size = 0;
  std::uint32_t interval_ms = 1000;      // TPC_PROGRESS every so often
  std::uint32_t stall_timeout_ms = 0;    // 0 = default
  std::string local_path;
  std::string peer_url;                  // pxfer://HOST:PORT/PATH
  std::string grant;
  std::string peer_fingerprint;          // "sha256:HEX"
  // Tail, sent only to a server with cap_tpc_auto_streams: -p auto. `streams` is then auto's
  // ceiling, and the copy starts with a few streams and adds them while the rate grows.
  bool has_auto = false;
  std::uint8_t auto_streams = 0;  // 1 = auto; 0 = `streams` is a fixed count
};
struct TpcProgress {
  std::uint64_t bytes = 0;  // moved so far in this copy (resumed bytes not counted)
  std::uint64_t total = 0;  // the file's size, 0 while unknown
  // The sending server's view of each data stream (as STATS carries it), when TPC_START asked
  // for it with open_want_stats (pxfer cp --stream-stats); else none. At most max_streams.
  std::vector<StreamFigures> streams;
};
struct TpcDone {
  std::uint64_t bytes = 0;          // the file's size
  std::uint64_t resumed_bytes = 0;  // of which already at the destination from an earlier attempt
  std::uint32_t elapsed_ms = 0;
  std::uint16_t streams = 0;        // data streams used
  std::uint32_t block_size = 0;
  std::uint8_t checksum = 0;        // pxfer::ChecksumAlgo
  std::string value;                // the whole-file digest both ends computed and compared
  std::uint64_t stream_recoveries = 0;
  // Tail, sent only in answer to a TPC_START that asked for auto: what the active server's stream
  // controller chose and on what evidence ("auto 24 (RTT 50 ms, ...)"), as a put or get prints it.
  bool has_choice = false;
  std::string stream_choice;
  // Second tail, sent only to a client that confirmed cap_tpc_end_counts (the first tail then goes
  // too, with an empty choice for a copy of a fixed count): the end of the file's account.
  bool has_end_counts = false;
  std::uint32_t block_copies = 0;    // blocks sent again because the first copy was overdue
  std::uint32_t streams_let_go = 0;  // slow streams the copy stopped waiting for
};
struct InfoRequest {};
struct Info {
  std::vector<std::pair<std::string, std::string>> entries;  // at most 64, key <= 64, value <= 256
};
struct Ping {
  std::uint64_t nonce = 0;
};
struct Pong {
  std::uint64_t nonce = 0;
};

using Message = std::variant<Hello, HelloOk, Open, OpenOk, Attach, AttachOk, Ack, End, Commit, Result,
                             ErrorMsg, Ping, Pong, Stats, InfoRequest, Info, Remove, Done, List, Listing, Mkdir, Queued,
                             Auth, AuthOk, Have, Sum, SumOk, SetAttributes, Stat, StatOk, Rename, RemoveTree, ListChildren,
                             AttachChallenge, AttachProof, TpcGrantRequest, TpcGrant, TpcStart, TpcProgress, TpcDone,
                             PutSmall, PutSmallOk, GetSmall, GetSmallOk, SmallChannel, SmallChannelOk, SmallData,
                             StreamOpen, StreamOpenOk, StreamRead, StreamData, StreamWrite, StreamClose, Retire>;

// Splits a listing into LISTING frames that each fit max_control_payload; the last has more = 0.
// An empty listing is one frame with no entries.
std::vector<Listing> split_listing(std::vector<ListEntry> entries);
// The HAVE frames for a set of present blocks (present[i]: block i), the last with more = 0;
// one empty frame when nothing is present.
std::vector<Have> split_have(const std::vector<bool>& present);

struct BlockHeader {
  std::uint64_t offset = 0;
  std::uint32_t raw_length = 0;   // bytes of file data the block stands for
  std::uint32_t flags = 0;        // BlockFlags
  std::uint32_t wire_length = 0;  // bytes of payload that follow (differs when compressed); the
                                  // block_tag_size bytes of the tag follow the payload
};

enum class DecodeStatus {
  ok,
  truncated,      // fewer bytes than the header or the fields say
  unknown_type,
  too_long,       // a length field over its hard limit
  bad_field,      // a value out of range (bad magic, zero block, ...)
  trailing_bytes, // payload longer than the message it carries
};
const char* to_string(DecodeStatus status) noexcept;

// Largest payload a frame of this type may carry; 0 for unknown types.
std::uint32_t max_payload(FrameType type) noexcept;

// Header: needs at least header_size bytes; checks the type and the per-type length limit, so a
// reader may then allocate `length` bytes safely.
DecodeStatus decode_header(std::span<const std::uint8_t> bytes, FrameHeader& out) noexcept;
// Payload of a non-block frame.
DecodeStatus decode_message(const FrameHeader& header, std::span<const std::uint8_t> payload, Message& out);
// The same, for a payload of exactly header.length bytes that the caller gives up: a byte string
// that ends the frame (a small file's data) takes the vector instead of being copied out of it.
DecodeStatus decode_message(const FrameHeader& header, Blob&& payload, Message& out);
// The first block_header_size bytes of a block frame's payload.
DecodeStatus decode_block_header(const FrameHeader& header, std::span<const std::uint8_t> payload,
                                 BlockHeader& out) noexcept;

// A whole frame (header + payload) for a message. Throws Error(usage) when a text field is over
// its limit (a path over max_path_length, ...): never sends a shortened one.
std::vector<std::uint8_t> encode(const Message& message);
// The same frame appended to `out` (several frames for one write).
void encode_append(const Message& message, std::vector<std::uint8_t>& out);
// encode_append, except that the bytes of a byte string that ends the frame (a small file's data:
// PUT_SMALL, GET_SMALL_OK, SMALL_DATA) are not copied into `out`: they are returned, to be written
// right after it (a gathering write), and the frame's header counts them. Empty for other frames.
std::span<const std::uint8_t> encode_append_head(const Message& message, std::vector<std::uint8_t>& out);
// Frame header + block header; the caller sends `wire_length` payload bytes right after, then
// the block's tag. These 24 bytes are also what the tag covers before the payload.
std::array<std::uint8_t, header_size + block_header_size> encode_block_header(const BlockHeader& block);

FrameType type_of(const Message& message) noexcept;
const char* type_name(FrameType type) noexcept;

}  // namespace pxfer::wire
