#pragma once
// -p auto: how many data streams one file uses, decided from what the transfer measures (issue 39).
// Pure: no clock reads, no I/O; the caller passes each sample, so tests replay synthetic paths.
//
// The transfer starts with a few streams (StreamCount::start) and runs in phases of one count:
//   warm-up   new streams go through slow start: max(min_warmup, 4 RTT), not measured, and on
//             until the phase saw a retransmit per stream (slow start overshoots a path with
//             little loss: 4 reno streams at 0.01 % moved 819 Mbit/s before their first loss and
//             ~170 after) or max(max_warmup, 20 RTT) passed
//   measure   the aggregate rate over max(min_phase, 8 RTT)
// After each phase the rate is compared with the best count so far:
//   rose by at least `gain` and  -> keep it as the best and add streams (double while it rose by
//   by `fair_share` of the          half or more, else half as many again), up to the ceiling;
//   streams added (+40 % for        the first measurement doubles, but keeps a long path's start
//   twice as many)                  that fills it (`full_rtt`)
//   (or by `gain` when loss held
//   them back with no queue for
//   most of the phase: they took
//   from no one)
//   rose by less, or fell        -> shed back to the best count: the added streams gave less than a
//                                   path with room gives (it is full, or shared with other flows,
//                                   whose share they took: bench/results/wan-fairness.md); kept
//                                   when loss held the streams back with no queue as they were
//                                   added or for most of the phase (measured in an overshoot, they
//                                   took from no one)
//   the same when it cannot shed -> keep this count: the aggregate stopped growing
// and then holds. RTT, retransmits and cwnd are the evidence told with the decision; the aggregate
// is what decides, since it is what the user waits for.
//
// Growing into room, without a phase: slow start shows what the path carries (the peak); on a long
// lossy path the streams then fall to what loss lets each keep, over seconds (50 ms, 0.01 %, reno:
// 4 streams ~700 Mbit/s for 3 s, ~140 a few seconds later; 32 streams hold ~750: docs/streams.md).
// A phase measured in that fall is worth little, and waiting for its end costs most of a GiB. So
// the path has room the streams cannot take whenever, past slow start (as for a phase):
//   - the aggregate over max(500 ms, 4 RTT) is below `room_share` of the peak,
//   - the RTT has shown no queue (within `queue_rtt` of the lowest seen) for as long,
//   - at least half the senders have data waiting (Send-Q: the network holds them, not the disk),
//   - cwnd / RTT is within 2x of the rate (their windows hold them, not a receiver's closed one);
// then three times as many streams at once (four after a deep fall). From then on only room grows
// them (the phases would compare counts inside overshoots). A full or shared bottleneck queues, so
// this does not take a neighbour's share; that stays the phases' fair-share rule.
// How many at once: when the loss outside slow start's bursts is known (retransmits over segments
// while the queue is gone), as many as it takes to carry the peak at the rate that loss lets one
// reno stream keep (MSS / RTT x 1.22 / sqrt(p), Mathis et al. 1997), half as many again for a
// margin: 50 ms, 0.01 %: 28 Mbit/s a stream, 35 (52 with the margin) for 977 Mbit/s in one step
// instead of 4 -> 16 -> 48, each step a slow start of ~2 s.
// A cubic stream keeps more than reno's rate, so this overstates its count: the extra streams
// queue at the bottleneck, whose queue then stops the growth.
// The peak can be loss's too: at 0.1 % slow start ends early (20 ms, reno: 7 streams peaked at
// 452 Mbit/s, the 34 sized from it then held 670 with no queue, `-p 64` 900). When the streams a
// step sized then carry `outgrown` times the peak it was sized for, still loss-bound with no
// queue, the step is sized again from the new peak (7 -> 34 -> 64 there).
// A phase whose second half ran at less than `steady` of its first is still falling: it measures
// on from its middle (at most three times).
#include "pxfer/core/layer.hpp"
#include <chrono>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "pxfer/core/rate_meter.hpp"

namespace pxfer {

struct StreamControllerSettings {
  std::uint16_t start = 4;     // streams at the start
  // A long path starts with a stream for each `ms_per_start_stream` of RTT (0: off): 17 at 50 ms,
  // 50 at 150. Each stream takes longer through slow start there and keeps less under loss (its
  // rate goes with 1 / RTT, so the streams a path needs go with the RTT), and a phase, measured over
  // 8 RTT, costs more: at 150 ms, 0.01 %, reno, auto from 16 needed 30 s for 1 GiB and `-p 64` 15
  // (bench/results/wan-matrix.md). The first RTT the streams measure decides, 200 ms in.
  double ms_per_start_stream = 3;
  // The sender's TCP congestion control ("" when unknown: taken as loss-based, reno or cubic). One
  // that keeps its rate under loss (bbr: it paces at the bandwidth it measures instead of halving a
  // window at each loss; keeps_rate_under_loss) needs no more streams on a long lossy path, and many
  // of them only overflow the bottleneck's queue: at 150 ms with bbr, `-p 8` moved 735-748 Mbit/s,
  // `-p 64` 474-485 and auto's 50 408-459, 100,000+ packets dropped before the emulator
  // (bench/results/wan-matrix.md, 2026-11-29). Its start is then a stream per
  // `ms_per_start_stream_paced` of RTT, it never grows into room (that room is loss's) and it may
  // always shed.
  std::string sender_congestion;
  double ms_per_start_stream_paced = 20;  // 150 ms: 8, as -p 8 there; 50 ms: 3, so the start's 4
  // The path's RTT when the caller knows it before the data streams open (the control connection's):
  // the start is sized from it at once; 0: from the streams' first RTT.
  double path_rtt_ms = 0;
  std::uint16_t ceiling = 64;  // at most (StreamCount::slots: --max-streams, the server, the file)
  double gain = 0.10;          // a step that raises the aggregate by less is not worth its streams
  // A step must raise the aggregate by this share of the streams it adds: on a loss-limited path
  // with room each stream adds its own rate (twice the streams, about twice the rate), while
  // streams that only take from flows sharing a full bottleneck raise it far less (4 -> 8 beside
  // another transfer's 4: +33 %; beside one iperf3 flow: +11 %).
  double fair_share = 0.4;
  bool can_shed = true;        // a get cannot retire streams yet: it holds instead
  // The aggregate fell below this share of the peak: room (see above). At 0.85-0.9 each step came
  // sooner, but two transfers sharing a full link grew on the moments their shares dipped (0.35 /
  // 0.65: bench/results/wan-fairness.md).
  double room_share = 0.6;
  double queue_rtt = 1.2;       // an RTT within this factor (+1 ms) of the lowest: no standing queue
  // A long path's sized start whose first measurement saw the RTT at this factor (+1 ms) of the
  // lowest or more in most of its samples: the streams already fill the path and its queue stands,
  // so the count is kept instead of doubled. There doubling costs seconds: the new streams' slow
  // start overflows the queue, and after the shed back reno takes a segment per RTT to win the
  // share back (20 ms, 0 %: 7 -> 14 -> 7 moved 804 Mbit/s against `-p 8`'s 901; 150 ms, 0 %: 50 ->
  // 64 moved 592 against 698). Not on a short path (the 4 of the start): doubling costs little
  // there, and the fair-share shed takes back streams that only queue. Lower than queue_rtt: a
  // standing queue of a few ms is what a full link with a short buffer shows.
  double full_rtt = 1.1;
  double steady = 0.75;         // a phase's second half at less than this share of its first: falling
  // Losses counted outside bursts before they size a step: 4 put p within about +-50 % (Poisson),
  // the count within +-25 % (it goes with 1 / sqrt(p)).
  std::uint64_t min_calm_losses = 4;
  // Streams sized from the loss carry less than their sum at the link's rate: each one's window saws
  // between half and all of its top, and the sum fills the link only with a margin. At 50 ms,
  // 0.01 %: the 31-47 that the formula asked for carried 640-680 Mbit/s, `-p 64` 660-840 in the
  // same runs (bench/results/wan-matrix.md).
  double fill_margin = 1.5;
  // The streams a loss-sized step gave carry this many times the peak it was sized for: that peak
  // was not the path's (see above), size again.
  double outgrown = 1.25;
  std::chrono::milliseconds min_warmup{500};
  std::chrono::milliseconds max_warmup{2000};
  std::chrono::milliseconds min_phase{1000};
  // A sender counts acknowledged blocks, a whole block at a time: a phase also lasts until this
  // much moved, so one block more or less is a small share of it (32 blocks: +-3 %).
  std::uint64_t min_phase_bytes = 0;
};

// bbr and its successors (bbr2, bbr3): a sender that keeps its rate under random loss.
bool keeps_rate_under_loss(std::string_view congestion);
// `told` when it reads as a congestion control's name (1-15 letters, digits, '_' or '-'), else "":
// a get's comes from the server (OPEN_OK) and is printed in the choice's evidence.
std::string congestion_name_or_empty(std::string_view told);

// How often the client looks (tune_streams), and so how often a get asks the server for its
// figures: those of a second ago hide when the queue came and went (at 1 s a get's loss counted
// too few calm samples to size its first step, 7 -> 21 -> 63 at 20 ms / 0.1 %).
inline constexpr std::chrono::milliseconds stream_sample_period{200};

// One look at the transfer, every stream_sample_period.
struct PathSample {
  Clock::time_point at;
  std::uint64_t bytes = 0;         // moved so far (all streams)
  unsigned streams = 0;            // data streams moving now
  double rtt_ms = 0;               // the streams' median smoothed RTT; 0 = unknown
  std::uint64_t segments = 0;      // sent so far (bytes / MSS); 0 = unknown
  std::uint64_t retransmits = 0;   // so far
  std::uint64_t cwnd_bytes = 0;    // the streams' congestion windows added up
  // Fewer blocks left than streams can carry: streams fall idle, so the aggregate says nothing
  // about the path any more; the controller stops deciding.
  bool tail = false;
  unsigned queued_streams = 0;     // streams whose sender has data waiting (Send-Q > 0)
  std::uint32_t mss = 0;           // the running streams' segment size; 0 = unknown
  std::uint64_t left = 0;          // bytes still to move; 0 = unknown
};

enum class StreamMove { grow, shed, settle };

struct StreamStep {
  double at_s = 0;
  StreamMove move = StreamMove::grow;
  std::uint16_t from = 0, to = 0;
  double rate_Bps = 0;          // the phase just measured (with `from` streams)
  double best_Bps = 0;          // the best phase before it
  std::string reason;
};

class StreamController {
 public:
  StreamController(const StreamControllerSettings& settings, Clock::time_point start);

  // The count wanted from now on; a step when it changed or the controller settled.
  std::optional<StreamStep> observe(const PathSample& sample);
  std::uint16_t target() const { return target_; }
  bool settled() const { return settled_; }
  const std::vector<StreamStep>& steps() const { return steps_; }
  // "auto 24 (RTT 50 ms, loss 0.011 %, aggregate stopped growing at 24: 236 -> 241 Mbit/s)".
  std::string evidence() const;
  double rtt_ms() const { return rtt_ms_; }
  // Retransmitted / sent segments, 0..1: outside slow start's bursts once enough losses were
  // counted there (the bursts overflow the queue: 1-2 % on a 0.01 % path), else all of them.
  std::optional<double> loss() const;

 private:
  Clock::duration warmup() const;
  bool warmed_up(const PathSample& s);
  bool no_queue(const PathSample& s) const;  // the RTT is near the lowest seen
  Clock::duration phase() const;
  StreamStep finish_phase(double rate, double at_s);
  void first_measurement(StreamStep& step, double rate);
  void grow_step(StreamStep& step, unsigned by, std::string reason);
  void start_phase(std::uint16_t count, Clock::time_point at);
  std::optional<double> recent_rate(const PathSample& s);  // also keeps the peak
  Clock::duration peak_window() const;
  bool loss_bound(const PathSample& s, double rate) const;
  std::optional<StreamStep> start_for_the_path(const PathSample& s);
  std::optional<StreamStep> size_start(double rtt_ms, Clock::time_point at);
  bool worth_growing(const PathSample& s, std::optional<double> rate) const;
  std::optional<StreamStep> grow_into_room(const PathSample& s, std::optional<double> rate);
  std::string room_reason(const PathSample& s, double rate, bool room, std::optional<unsigned> fill);
  bool steady_or_restart(const PathSample& s);
  void count_calm_loss(const PathSample& s);
  std::optional<double> calm_loss() const;
  std::optional<unsigned> streams_to_fill() const;

  StreamControllerSettings settings_;
  Clock::time_point start_;
  std::uint16_t target_;
  bool settled_ = false;
  bool ended_ = false;  // the transfer's tail: nothing more to decide
  Clock::time_point phase_start_;
  std::optional<std::uint64_t> phase_retransmits_;  // the counter when the phase's streams all moved
  std::optional<Clock::time_point> measure_start_;
  std::uint64_t measure_bytes_ = 0;
  std::optional<std::pair<Clock::time_point, std::uint64_t>> measure_mid_;  // the phase's middle
  int restarts_ = 0;  // of this phase's measurement (still falling)
  // The measurement's samples, and those in which loss held the streams back with no queue: a
  // count that gave little then took from no one, so it is kept (a full link queues).
  unsigned measured_samples_ = 0, loss_bound_samples_ = 0;
  unsigned queued_samples_ = 0;  // of the measurement's samples, those with the RTT at full_rtt or more
  // Loss held the streams back with no queue when this phase added streams: a full link queues, so
  // the added ones cannot have taken a neighbour's share; what they measured worse was an overshoot.
  bool grew_while_loss_bound_ = false;
  bool sized_for_rtt_ = false;  // the start was sized from an RTT
  bool long_path_start_ = false;  // ... and that raised the count: a long path
  bool paced_sender_ = false;   // keeps_rate_under_loss(settings_.sender_congestion)
  std::optional<StreamStep> sized_start_;  // sized at construction, told on the first sample
  std::deque<std::pair<Clock::time_point, std::uint64_t>> recent_;  // (at, bytes) over peak_window()
  double peak_Bps_ = 0;     // the highest aggregate over peak_window() so far
  double sized_from_Bps_ = 0;  // the peak the last loss-sized step was sized to carry; 0: none yet
  double base_rtt_ms_ = 0;  // the lowest RTT seen: the path without a queue
  std::optional<Clock::time_point> no_queue_since_;  // the RTT has been near base_rtt_ms_ since
  std::optional<std::uint16_t> best_count_;
  double best_rate_ = 0, last_rate_ = 0;
  double rtt_ms_ = 0;
  std::uint64_t segments_ = 0, retransmits_ = 0;
  // Segments and retransmits while the queue was gone (past slow start): the path's own loss.
  std::uint64_t calm_segments_ = 0, calm_retransmits_ = 0;
  std::optional<std::pair<std::uint64_t, std::uint64_t>> last_counts_;  // (segments, retransmits)
  std::uint32_t mss_ = 0;
  std::string why_;  // how it ended (or how far it got)
  std::vector<StreamStep> steps_;
};

std::string_view stream_move_name(StreamMove move);
// "streams: 4 -> 8 streams (aggregate 112 -> 224 Mbit/s (+100.0 %))": not "auto:", which
// starts the batch --auto controller's lines.
std::string format_step(const StreamStep& step);

}  // namespace pxfer
