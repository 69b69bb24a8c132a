#pragma once
// The capability bits of HELLO and HELLO_OK (docs/protocol.md "Version and capabilities"): each
// names an optional feature, a message tail or a frame; a peer uses one only when both ends offered it.
#include "pxfer/core/layer.hpp"
#include <cstdint>

namespace pxfer::wire {

// Capability bits offered in HELLO and HELLO_OK; the session uses the intersection.
enum Capability : std::uint64_t {
  cap_block_acks = 1u << 0,
  cap_admission = 1u << 1,  // OPEN_OK carries the granted stream count and the server's load
  cap_on_control = 1u << 2,  // OPEN may carry open_on_control
  // Both ends send PING on the control connection every heartbeat (at most a second apart) while
  // a transfer runs, so the sender too can tell a frozen receiver or a dead path from a slow disk;
  // and OPEN may carry a transfer id (Open::transfer_id).
  cap_heartbeat = 1u << 3,
  cap_namespace = 1u << 4,   // the server answers STAT, RENAME, REMOVE_TREE, LIST_CHILDREN (pxfer stat/mv/rm -r/ls)
  cap_tpc = 1u << 5,         // the server answers TPC_GRANT_REQUEST and TPC_START (third-party copy)
  cap_small_files = 1u << 6,  // the server answers PUT_SMALL and GET_SMALL (many small files pipelined)
  // A data stream under TLS binds its ATTACH_PROOF to its own TLS channel (an exporter of that
  // connection), and its blocks then rely on TLS's AEAD alone: their tag is 16 zero bytes
  // instead of a Poly1305 (block_mac.hpp). Clear streams keep the per-block MAC.
  cap_tls_bound_streams = 1u << 7,
  // A data connection whose stream ended cleanly (END both ways) may carry another ATTACH, for the
  // same client's next file: one set of streams for a whole -r run.
  cap_kept_streams = 1u << 8,
  // SMALL_CHANNEL: the bytes of PUT_SMALL and GET_SMALL_OK move on one data connection of the
  // control connection's own, each file's under a Poly1305 tag (docs/protocol.md "Small files").
  cap_small_channel = 1u << 9,
  cap_stream_io = 1u << 10,  // the server answers STREAM_OPEN, STREAM_READ, STREAM_WRITE, STREAM_CLOSE
  // TPC_START may ask for -p auto (its tail): the active server's copy runs the stream controller
  // up to TPC_START's streams, and TPC_DONE's tail says what it chose and why.
  cap_tpc_auto_streams = 1u << 11,
  // RETIRE: a receiver may ask the sender to end a data stream cleanly (-p auto shedding streams
  // in a get, where the server sends).
  cap_retire_streams = 1u << 12,
  // The end of a file (issue 39): a sender may send a block again on another stream when its first
  // copy is overdue (a stream recovering from a burst loss); the receiver writes whichever copy
  // arrives first, acknowledges a second copy only once the first is in the file, and takes a
  // stream that breaks after every block is in the file for one the sender let go (no failure).
  cap_block_copies = 1u << 13,
  // TPC_DONE's second tail: the copy's blocks sent twice and streams let go (cap_block_copies'
  // counts, as a put or get prints them).
  cap_tpc_end_counts = 1u << 14,
  // ATTACH may carry its proof (its tail), under a nonce of the client's: no ATTACH_CHALLENGE.
  cap_attach_proven = 1u << 15,
  // OPEN_OK's second tail names the congestion control of the server's data sockets: -p auto in a
  // get sizes its streams by the sender's (bbr keeps its rate under loss, reno and cubic do not).
  cap_sender_congestion = 1u << 16,
};
inline constexpr std::uint64_t our_capabilities = cap_block_acks | cap_admission | cap_on_control | cap_heartbeat |
                                                  cap_namespace | cap_tpc | cap_small_files | cap_tls_bound_streams |
                                                  cap_kept_streams | cap_small_channel | cap_stream_io |
                                                  cap_tpc_auto_streams | cap_retire_streams | cap_block_copies |
                                                  cap_tpc_end_counts | cap_attach_proven | cap_sender_congestion;

}  // namespace pxfer::wire
