#pragma once
// `pxfer report`: what one run's NDJSON events (docs/json.md) say, as plain data for the charts.
// One Run per input: a single transfer (`put|get --json`), a batch (`-r/--from-file --json`), a
// sweep (`sweep --json`) or a path check (`doctor --json`). Pure: the caller reads the files; parse_run gets their text.
#include "pxfer/core/layer.hpp"
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pxfer::report {

struct RatePoint {
  double t = 0;  // seconds since the start
  double bytes = 0;
  double avg_Bps = 0;
  double inst_Bps = 0;
};

// One stream in one interval (--stream-stats), from the sending side.
struct StreamPoint {
  double t = 0;
  unsigned stream = 0;
  double bytes = 0;
  double inst_Bps = 0;
  double cwnd = 0;  // segments
  double rtt_us = 0;
  double retransmits = 0;  // so far
  double send_q = 0;       // bytes queued, not yet sent
  double mss = 0;          // segment size; 0 = not in the input
};

struct StreamTotal {
  unsigned stream = 0;
  double bytes = 0;
  double share = 0;
  unsigned intervals = 0;
  unsigned intervals_send_q = 0;
};

enum class FileState { running, done, skipped, failed };

struct FileSpan {
  std::string path;
  double start_s = 0;
  std::optional<double> end_s;
  FileState state = FileState::running;
  double bytes = 0;
  std::string error;  // failed: the message
  double data_s = 0;  // done: its last attempt's data phase (the rest of end - start waited: queue, retries)
};

struct SweepPoint {
  std::string setting;  // "get, window auto, congestion default, compress none"
  unsigned files = 0;
  unsigned streams = 0;
  unsigned runs = 0;
  unsigned failures = 0;
  double median_mbit = 0;
};

// pxfer doctor --json: per direction what one stream reaches and what to change.
struct PathDirection {
  std::string name;  // "put (this host sends)"
  double per_stream_Bps = 0;
  double window_bytes = 0;
  unsigned streams_needed = 0;
  double buffer_needed = 0;
  std::vector<std::string> advice;
};
struct PathCheck {
  double rtt_s = 0;
  double target_Bps = 0;
  double loss = 0;
  double bdp_bytes = 0;
  std::string local, remote;  // each host's TCP settings, as one line
  std::vector<PathDirection> directions;
};

enum class RunKind { transfer, batch, sweep, doctor };

// What was measured, for the page's header. Empty strings and zeros mean "not in the input".
struct RunMeta {
  RunKind kind = RunKind::transfer;
  std::string direction;  // put, get (a batch: of its files; "put+get" when mixed)
  std::string source, dest;
  std::string hosts;      // servers named in the URLs
  double bytes = 0;       // of the file / of the done files
  double seconds = 0;
  double rate_Bps = 0;
  unsigned streams = 0;   // per file
  std::string stream_choice;  // -p auto: "auto 24 (RTT 50 ms, loss 0.011 %, aggregate stopped growing at 24: ...)"
  std::vector<std::string> stream_steps;  // -p auto's steps, in order ("auto: 4 -> 8 streams (...)")
  std::string send_window;  // send buffers pinned past autotuning ("pinned on 2 streams, up to 8 MiB; ...")
  double block_copies = 0;    // copies of overdue blocks at the end of the file (sent by a put, arrived in a get)
  double streams_let_go = 0;  // slow streams reset once all they carried were such copies
  double block_size = 0;
  double window_requested = 0;  // -w (0 = autotuning)
  std::string buffers;    // "local snd 4 MiB rcv 128 KiB, remote ..."
  std::string congestion;
  std::string protection;
  std::string identity;
  std::string checksum;
  std::string version;    // pxfer's, when the input says it
  std::string date;       // ISO 8601, UTC
  std::string command;    // the options that made it (from a --report run)
  unsigned files_planned = 0, files_done = 0, files_skipped = 0, files_failed = 0;
  unsigned max_in_flight = 0;
  std::optional<unsigned> busy_streams;
  unsigned queued = 0;    // "queued" events: the server's admission queue held it
  std::optional<double> cpu_s;  // pxfer's CPU time over the run (user + system), when recorded
  bool ok = true;         // no error event, no failed file
  std::string error;      // the error event's message
};

struct Run {
  std::string name;   // where it came from (the input's file name)
  std::string label;  // short, from its options: "put -p 4 -w 1 MiB"
  RunMeta meta;
  std::vector<RatePoint> rates;
  std::vector<StreamPoint> streams;
  std::vector<StreamTotal> stream_totals;
  std::vector<FileSpan> files;  // batch: in start order
  std::vector<SweepPoint> sweep;
  std::optional<PathCheck> path;  // doctor
  std::vector<std::string> warnings;
};

// Parses NDJSON events. `name` names the input in errors ("NAME:LINE: ..."): a line that is not a
// JSON object with an "event" field throws Error(Errc::usage); unknown events are ignored (newer
// versions may add some), as are blank lines. Throws too when no event at all is recognised.
Run parse_run(std::string_view ndjson, const std::string& name);

// The label a run gets from its options when it did not record its command: direction, -r, -p,
// -c (most files in flight), -w (a single transfer's request), and the congestion control if asked.
std::string describe_options(const RunMeta& meta, bool with_congestion = false);
// Gives every run a label that tells it apart from the others: its options (the congestion
// control only when the runs' differ), then its input's name where the options are the same.
void label_runs(std::vector<Run>& runs);

}  // namespace pxfer::report
