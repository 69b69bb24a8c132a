#pragma once
// What most likely limited a transfer, in one sentence, from the figures a run records: the
// server's admission queue, packet loss, the TCP window and socket buffers, CPU, or the disks
// (the sender's reads, or the receiver's writes holding back acknowledgements). Used by the
// end-of-run summary (progress_printer) and `pxfer report` (report_limit.cpp). Pure.
#include "pxfer/core/layer.hpp"
#include <optional>
#include <string>

namespace pxfer {

struct LimitEvidence {
  bool put = true;                        // this host sends
  double seconds = 0;                     // the data phase
  double bytes = 0;                       // moved
  unsigned streams = 0;                   // data streams per file
  std::optional<unsigned> busy_streams;   // streams with Send-Q > 0 in at least half the intervals (--stream-stats)
  double retransmits = 0;                 // retransmitted segments, every stream (--stream-stats)
  double mss = 0;                         // segment size; 0 = unknown (1448 assumed)
  double rtt_s = 0;                       // the streams' smoothed round trip; 0 = unknown
  double cwnd_segments = 0;               // their mean congestion window; 0 = unknown
  double queue_wait_s = 0;                // waited for a slot in the server's admission queue
  bool queued = false;                    // the server queued it (even when the wait is unknown)
  std::optional<double> cpu_s;            // this process's CPU time, user + system
};

enum class LimitKind { queue, loss, window, cpu, disk, unknown };

struct Limit {
  LimitKind kind = LimitKind::unknown;
  std::string sentence;  // "Likely limit: ..." one sentence, with what to change
  std::string evidence;  // the figures it rests on: "busy streams 4 of 4, retransmits 0.00 %, ..."
};

// Thresholds, in order: queue when the wait was at least a fifth of the run; loss at 0.1 % of
// segments retransmitted; window when at least half the streams had data waiting; CPU at 0.9
// CPU-seconds a second; disks when the streams' queues were mostly empty.
Limit likely_limit(const LimitEvidence& e);
const char* limit_name(LimitKind kind);

}  // namespace pxfer
