#pragma once
// -p auto applied to a running transfer: every 200 ms it samples the transfer (bytes moved,
// streams attached, and the sending side's TCP_INFO: RTT, retransmits, cwnd) into the pure
// StreamController (pxfer/core/stream_controller.hpp) and carries out its decision: spawns data streams
// on free slots, or (a put, where this side sends) retires the last ones cleanly.
#include "pxfer/client/layer.hpp"
#include <cstdint>
#include <functional>
#include <vector>

#include "net/connection.hpp"
#include "pxfer/engine/progress_listener.hpp"
#include "pxfer/core/stream_controller.hpp"
#include "engine/transfer.hpp"

namespace pxfer {

struct StreamTuning {
  std::shared_ptr<transfer::Transfer> transfer;
  StreamController* controller = nullptr;
  std::function<void(std::uint16_t index)> spawn;                 // starts data stream `index`
  std::function<std::vector<wire::StreamFigures>()> figures;     // the sending side's, as known here
  ProgressListener* listener = nullptr;                          // told of each step (--stream-stats)
};

// A sample of the transfer for the controller.
// Streams from `running` on were shed: their figures count for retransmits and segments only.
PathSample path_sample(Clock::time_point now, std::uint64_t bytes, unsigned streams,
                       const std::vector<wire::StreamFigures>& figures, std::uint16_t running = 0xffff);

// Runs until cancelled (net::first_of with the transfer's control exchange), settled or not.
net::awaitable<void> tune_streams(StreamTuning tuning);

}  // namespace pxfer
