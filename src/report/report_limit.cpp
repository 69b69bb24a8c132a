// `pxfer report`: what limited each run (transfer_limit.hpp, from the run's own figures) and a
// bar of the runs' final rates side by side.
#include <algorithm>
#include <cstdio>
#include <map>

#include "pxfer/core/report_html.hpp"
#include "pxfer/core/transfer_limit.hpp"
#include "report/svg_draw.hpp"
#include "report/printf_number.hpp"

namespace pxfer::report {
namespace {

// The streams' figures over the run: the last retransmit count of each stream (they are totals so
// far), and the mean RTT, window and segment size of the samples that had them.
void stream_figures(const Run& r, LimitEvidence& e) {
  std::map<unsigned, double> retransmits;
  double rtt = 0, cwnd = 0, mss = 0;
  unsigned with_rtt = 0, with_mss = 0;
  for (const auto& p : r.streams) {
    retransmits[p.stream] = std::max(retransmits[p.stream], p.retransmits);
    if (p.rtt_us > 0) {
      rtt += p.rtt_us / 1e6;
      cwnd += p.cwnd;
      ++with_rtt;
    }
    if (p.mss > 0) {
      mss += p.mss;
      ++with_mss;
    }
  }
  for (const auto& [stream, count] : retransmits) e.retransmits += count;
  if (with_rtt) {
    e.rtt_s = rtt / with_rtt;
    e.cwnd_segments = cwnd / with_rtt;
  }
  if (with_mss) e.mss = mss / with_mss;
}

// A batch's files waited (queue, retries) for what their span holds beyond their data phase:
// that share of the run's wall time is its queue wait.
double batch_wait(const Run& r) {
  double span = 0, waited = 0;
  for (const auto& f : r.files) {
    if (!f.end_s || f.state != FileState::done || f.data_s <= 0) continue;
    const double s = *f.end_s - f.start_s;
    span += s;
    waited += std::max(0.0, s - f.data_s);
  }
  return span > 0 ? waited / span * r.meta.seconds : 0;
}

}  // namespace

LimitEvidence limit_evidence(const Run& r) {
  LimitEvidence e;
  e.put = r.meta.direction.find("put") != std::string::npos;
  e.seconds = r.meta.seconds;
  e.bytes = r.meta.bytes > 0 ? r.meta.bytes : r.rates.empty() ? 0 : r.rates.back().bytes;
  e.streams = !r.stream_totals.empty() ? static_cast<unsigned>(r.stream_totals.size()) : r.meta.streams;
  e.busy_streams = r.meta.busy_streams;
  stream_figures(r, e);
  e.queued = r.meta.queued > 0;
  if (r.meta.kind == RunKind::batch) e.queue_wait_s = batch_wait(r);
  e.cpu_s = r.meta.cpu_s;
  return e;
}

std::string final_rate_chart(const std::vector<Run>& runs) {
  double top = 0;
  std::size_t label_chars = 8;
  for (const auto& r : runs) {
    top = std::max(top, r.meta.rate_Bps);
    label_chars = std::max(label_chars, r.label.size());
  }
  if (top <= 0) return "";
  const double left = std::min(420.0, 20 + static_cast<double>(label_chars) * draw::char_width);
  const double bar_room = 960 - left - 130, row = 26;
  std::string out = draw::open_svg(960, 40 + row * static_cast<double>(runs.size()) + 10, "Final rate of each run (MB/s)");
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const double y = 40 + row * static_cast<double>(i);
    const double w = std::max(1.0, runs[i].meta.rate_Bps / top * bar_room);
    out += draw::text(left - 8, y + 15, runs[i].label, "end");
    out += "<rect class=\"final-rate\" x=\"" + draw::n(left) + "\" y=\"" + draw::n(y + 3) + "\" width=\"" + draw::n(w) +
           "\" height=\"" + draw::n(row - 8) + "\" fill=\"" + palette_colour(static_cast<unsigned>(i) % palette_size) + "\"/>\n";
    out += draw::text(left + w + 6, y + 15, printf_number("%.1f MB/s", runs[i].meta.rate_Bps / 1e6));
  }
  return out + "</svg>\n";
}

std::string limits_section(const std::vector<Run>& runs) {
  std::string out;
  for (const auto& r : runs) {
    if (r.meta.kind != RunKind::transfer && r.meta.kind != RunKind::batch) continue;
    const Limit l = likely_limit(limit_evidence(r));
    out += "<p class=\"verdict limit\">" + xml_escape(r.label) + ": " + xml_escape(l.sentence) + "</p>\n";
    if (!l.evidence.empty()) out += "<p class=\"muted\">evidence: " + xml_escape(l.evidence) + "</p>\n";
  }
  if (out.empty()) return "";
  return "<h2>What limited it</h2>\n" + out + final_rate_chart(runs);
}

}  // namespace pxfer::report
