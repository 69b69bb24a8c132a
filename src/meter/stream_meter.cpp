#include "pxfer/core/stream_meter.hpp"

namespace pxfer {

std::vector<StreamSample> StreamMeter::sample(Clock::time_point now, const std::vector<StreamFigures>& figures) {
  double interval = std::chrono::duration<double>(now - last_).count();
  last_ = now;
  if (intervals_.size() < figures.size()) {
    intervals_.resize(figures.size());
    queued_.resize(figures.size());
  }
  std::vector<StreamSample> out;
  for (std::size_t i = 0; i < figures.size(); ++i) {
    StreamSample s{figures[i], 0};
    std::uint64_t before = i < previous_.size() ? previous_[i].bytes : 0;
    if (interval > 0 && figures[i].bytes >= before)
      s.inst_bytes_per_s = static_cast<double>(figures[i].bytes - before) / interval;
    ++intervals_[i];
    if (figures[i].unsent > 0) ++queued_[i];
    out.push_back(s);
  }
  previous_ = figures;
  return out;
}

std::vector<StreamTotals> StreamMeter::totals(Clock::time_point now) const {
  double seconds = std::chrono::duration<double>(now - start_).count();
  std::uint64_t all = 0;
  for (const auto& f : previous_) all += f.bytes;
  std::vector<StreamTotals> out;
  for (std::size_t i = 0; i < previous_.size(); ++i) {
    StreamTotals t;
    t.stream = previous_[i].stream;
    t.bytes = previous_[i].bytes;
    t.share = all ? static_cast<double>(t.bytes) / static_cast<double>(all) : 0;
    t.avg_bytes_per_s = seconds > 0 ? static_cast<double>(t.bytes) / seconds : 0;
    t.retransmits = previous_[i].retransmits;
    t.intervals = intervals_[i];
    t.intervals_queued = queued_[i];
    out.push_back(t);
  }
  return out;
}

unsigned StreamMeter::busy_streams(const std::vector<StreamTotals>& totals) {
  unsigned n = 0;
  for (const auto& t : totals)
    if (t.intervals > 0 && 2 * t.intervals_queued >= t.intervals) ++n;
  return n;
}

}  // namespace pxfer
