#include "pxfer/core/transfer_limit.hpp"

#include <cmath>
#include <cstdio>

#include "report/printf_number.hpp"

namespace pxfer {
namespace {

double segment_size(const LimitEvidence& e) { return e.mss > 0 ? e.mss : 1448; }

double retransmit_share(const LimitEvidence& e) {
  const double segments = e.bytes / segment_size(e);
  return segments > 0 ? e.retransmits / segments : 0;
}

// What the streams' windows allow together: cwnd x MSS per round trip, per stream.
double window_cap_Bps(const LimitEvidence& e) {
  return e.rtt_s > 0 && e.cwnd_segments > 0 ? e.cwnd_segments * segment_size(e) / e.rtt_s * e.streams : 0;
}

std::string evidence_of(const LimitEvidence& e) {
  std::string out;
  auto add = [&out](const std::string& s) {
    if (!out.empty()) out += ", ";
    out += s;
  };
  if (e.seconds > 0) add(printf_number("%.1f MB/s", e.bytes / e.seconds / 1e6));
  if (e.busy_streams) add("busy streams " + std::to_string(*e.busy_streams) + " of " + std::to_string(e.streams));
  if (e.busy_streams || e.retransmits > 0) add(printf_number("retransmits %.2f %%", retransmit_share(e) * 100));
  if (e.rtt_s > 0) add(printf_number("RTT %.2f ms", e.rtt_s * 1000));
  if (window_cap_Bps(e) > 0) add(printf_number("window cap %.1f MB/s", window_cap_Bps(e) / 1e6));
  if (e.queue_wait_s > 0 || e.queued) add(printf_number("queue wait %.1f s", e.queue_wait_s));
  if (e.cpu_s && e.seconds > 0) add(printf_number("CPU %.2f s per s", *e.cpu_s / e.seconds));
  return out;
}

}  // namespace

const char* limit_name(LimitKind kind) {
  switch (kind) {
    case LimitKind::queue: return "admission queue";
    case LimitKind::loss: return "packet loss";
    case LimitKind::window: return "TCP window / buffers";
    case LimitKind::cpu: return "CPU";
    case LimitKind::disk: return "disk (sender's reads or receiver's writes)";
    case LimitKind::unknown: break;
  }
  return "unknown";
}

Limit likely_limit(const LimitEvidence& e) {
  Limit l;
  l.evidence = evidence_of(e);
  const unsigned half = (e.streams + 1) / 2;
  if (e.queue_wait_s > 0 && e.queue_wait_s >= 0.2 * (e.seconds + e.queue_wait_s)) {
    l.kind = LimitKind::queue;
    l.sentence = std::string("Likely limit: the server's admission queue: the transfer waited") + printf_number(" %.1f s", e.queue_wait_s) +
                 " for a slot (its --max-active); run when it is quieter or ask its operator for more slots.";
  } else if (retransmit_share(e) >= 0.001) {
    l.kind = LimitKind::loss;
    l.sentence = std::string("Likely limit: packet loss on the path:") + printf_number(" %.2f %%", retransmit_share(e) * 100) +
                 " of the segments were sent again; more streams (-p) share the loss, or try --congestion bbr.";
  } else if (e.busy_streams && *e.busy_streams >= half && e.streams > 0) {
    l.kind = LimitKind::window;
    l.sentence = "Likely limit: the TCP window or socket buffers: " + std::to_string(*e.busy_streams) + " of " +
                 std::to_string(e.streams) + " streams had data waiting in most intervals; a larger -w or more streams (-p) help.";
  } else if (e.cpu_s && e.seconds > 0 && *e.cpu_s / e.seconds >= 0.9) {
    l.kind = LimitKind::cpu;
    l.sentence = std::string("Likely limit: CPU: pxfer was busy") + printf_number(" %.2f CPU-seconds a second", *e.cpu_s / e.seconds) +
                 " (checksums, encryption, copies); --checksum none or fewer --encrypt streams cost less.";
  } else if (e.busy_streams && e.streams > 0) {
    l.kind = LimitKind::disk;
    l.sentence = std::string("Likely limit: the disks, not the network: only ") + std::to_string(*e.busy_streams) + " of " +
                 std::to_string(e.streams) + " streams had data waiting to be sent, so the sender was waiting for data: " +
                 (e.put ? "this host's reads, or the server's writes" : "the server's reads, or this host's writes") + ".";
  } else {
    l.sentence = "Likely limit: not enough figures to tell; run with --stream-stats (and --json for pxfer report).";
  }
  return l;
}

}  // namespace pxfer
