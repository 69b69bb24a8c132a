#include "pxfer/core/block_placement.hpp"

#include <algorithm>
#include <cmath>

namespace pxfer {

StreamLoad load_of(const TcpSnapshot& tcp, std::uint32_t block) {
  if (tcp.rtt_us == 0 || tcp.mss == 0 || tcp.cwnd_segments == 0) return {};
  const double rtt = tcp.rtt_us / 1e6;
  const double window = static_cast<double>(tcp.cwnd_segments) * tcp.mss;
  double rate = window / rtt;
  if (tcp.ssthresh >= TcpSnapshot::first_slow_start) {
    const double rtts = std::max(1.0, std::ceil(std::log2(1.0 + block / window)));
    rate = block / (rtts * rtt);
  }
  return {rate, tcp.unsent_bytes / rate};
}

double seconds_to_finish(const StreamLoad& self, std::span<const StreamLoad> others, std::uint64_t queued) {
  double rate = 0;
  double held = 0;  // bytes the streams hold already, at their own rates
  auto add = [&](const StreamLoad& s) {
    if (s.rate <= 0) return;
    rate += s.rate;
    held += s.backlog * s.rate;
  };
  add(self);
  for (const auto& s : others) add(s);
  return rate > 0 ? (static_cast<double>(queued) + held) / rate : 0;
}

bool takes_block(const StreamLoad& self, std::span<const StreamLoad> others, std::uint64_t queued, std::uint32_t block,
                 const PlacementSettings& settings) {
  if (self.rate <= 0) return true;  // nothing measured: as before, the first free stream takes it
  const double mine = self.backlog + block / self.rate;
  // Done before the rest of the file would be anyway: taking it costs nothing.
  if (mine <= seconds_to_finish(self, others, queued)) return true;
  for (const auto& s : others) {
    if (s.rate <= 0) continue;
    const double theirs = s.backlog + block / s.rate;
    if (theirs * settings.faster_by < mine) return false;
  }
  return true;
}

}  // namespace pxfer
