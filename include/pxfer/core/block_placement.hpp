#pragma once
// Which stream the file's last blocks go to (issue 39: the tail). Pure: no clock, no I/O.
//
// Every stream takes the next block from one shared queue as soon as it has written its last one
// into its socket. On a long lossy path the streams' rates differ tenfold at any moment (150 ms,
// 0.01 %, reno, 50 streams: cwnd 57 to 763 in the same second), and a stream that just lost a
// packet still takes a block like any other. Near the end of a file that block, plus the MiB its
// socket already holds, takes such a stream 4-5 s, while the fast streams have finished and idle:
// 110 MB of a GiB took 3.7 s of 12.7 where the path carries 117 MB/s (bench/results/wan-matrix.md,
// "The tail").
//
// So a stream takes a block only when it would get the block onto the wire before the transfer
// ends anyway, or when no other stream would get it there sooner. Otherwise it leaves the block in
// the queue for a faster stream and asks again shortly. Nothing is sent twice and nothing changes
// on the wire: only the order in which streams take blocks.
#include "pxfer/core/layer.hpp"
#include "pxfer/core/socket_options.hpp"
#include <cstdint>
#include <span>

namespace pxfer {

// A stream as the sender sees it when a block could go to it.
struct StreamLoad {
  double rate = 0;     // bytes/s it moves now (cwnd x MSS / RTT); 0: not measured yet
  double backlog = 0;  // seconds until it has put on the wire what it holds already
};

struct PlacementSettings {
  // Another stream must get the block out this much sooner for this one to leave it: rates read
  // from cwnd jitter by tens of percent, and a block left in the queue costs its stream an idle
  // wait.
  double faster_by = 1.5;
};

// A stream's load from its socket's TCP_INFO: the rate cwnd x MSS / RTT, and its unsent bytes at
// that rate. A stream in its first slow start (no loss yet: a new stream) doubles cwnd each RTT:
// its rate is what it averages over the RTTs it needs for a block from today's cwnd, so a new
// stream takes blocks (it never leaves slow start otherwise) but not the file's last ones when a
// stream already up to speed has them out sooner. No figures: a rate of 0, not measured.
StreamLoad load_of(const TcpSnapshot& tcp, std::uint32_t block);

// Whether stream `self` takes the next block (`block` bytes) or leaves it to a faster one.
// `others` are the other streams that take blocks (not the shed ones); `queued` counts the bytes
// no stream has taken yet, this block included.
bool takes_block(const StreamLoad& self, std::span<const StreamLoad> others, std::uint64_t queued, std::uint32_t block,
                 const PlacementSettings& settings = {});

// The seconds from now until the rest of the file is on the wire if every stream keeps its rate
// and the work divides perfectly: what no placement can beat.
double seconds_to_finish(const StreamLoad& self, std::span<const StreamLoad> others, std::uint64_t queued);

}  // namespace pxfer
