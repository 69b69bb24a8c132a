#pragma once
// Per-stream view of a transfer (--stream-stats): each interval, every stream's rate and its
// sending side's TCP figures; at the end, each stream's share and how often it had data queued,
// the `netstat` view that showed "only 2 of 9 streams had a Send-Q". Pure: no sockets here.
#include "pxfer/core/layer.hpp"
#include <cstdint>
#include <vector>

#include "pxfer/core/rate_meter.hpp"
#include "pxfer/core/wire_types.hpp"

namespace pxfer {

struct StreamSample {
  StreamFigures figures;
  double inst_bytes_per_s = 0;
};

struct StreamTotals {
  std::uint16_t stream = 0;
  std::uint64_t bytes = 0;
  double share = 0;             // of all streams' bytes, 0..1
  double avg_bytes_per_s = 0;
  std::uint32_t retransmits = 0;
  unsigned intervals = 0;
  unsigned intervals_queued = 0;  // intervals in which the socket had unsent data (Send-Q > 0)
};

class StreamMeter {
 public:
  explicit StreamMeter(Clock::time_point start) : start_(start), last_(start) {}
  std::vector<StreamSample> sample(Clock::time_point now, const std::vector<StreamFigures>& figures);
  std::vector<StreamTotals> totals(Clock::time_point now) const;
  // Streams that had data queued in at least half of the intervals.
  static unsigned busy_streams(const std::vector<StreamTotals>& totals);

 private:
  Clock::time_point start_;
  Clock::time_point last_;
  std::vector<StreamFigures> previous_;
  std::vector<unsigned> intervals_;
  std::vector<unsigned> queued_;
};

struct IntervalReport {
  RateSample total;
  std::vector<StreamSample> streams;  // empty unless --stream-stats
};

}  // namespace pxfer
