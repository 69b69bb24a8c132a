#include "pxfer/core/doctor.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>

#include "pxfer/common/units.hpp"

namespace pxfer {
namespace {

// Linux advertises about half of the receive buffer as window (tcp_adv_win_scale = 1); the send
// buffer must also hold the unacknowledged data plus overhead. Half the smaller ceiling is what
// one autotuned stream keeps in flight.
double autotuned_window(const HostSettings& sender, const HostSettings& receiver) {
  return static_cast<double>(std::min(sender.tcp_wmem[2], receiver.tcp_rmem[2])) / 2;
}

std::uint64_t round_up_mib(double bytes) {
  std::uint64_t mib = 1 << 20, v = mib;
  while (static_cast<double>(v) < bytes) v *= 2;
  return v;
}

std::string fmt(const char* format, double a, double b = 0, double c = 0) {
  char buf[256];
  std::snprintf(buf, sizeof buf, format, a, b, c);
  return buf;
}

DirectionAdvice advise_direction(const PathFacts& f, const HostSettings& sender, const HostSettings& receiver,
                                 std::string name, const std::string& sender_name, const std::string& receiver_name) {
  DirectionAdvice d;
  d.name = std::move(name);
  d.window_bytes = autotuned_window(sender, receiver);
  d.window_bytes_per_s = f.rtt_s > 0 ? d.window_bytes / f.rtt_s : 0;
  if (f.loss > 0 && f.rtt_s > 0) d.loss_bytes_per_s = f.mss / (f.rtt_s * std::sqrt(f.loss)) * std::sqrt(1.5);
  d.per_stream_bytes_per_s = d.loss_bytes_per_s > 0 ? std::min(d.window_bytes_per_s, d.loss_bytes_per_s) : d.window_bytes_per_s;
  double bdp = f.target_bytes_per_s * f.rtt_s;
  d.buffer_needed = round_up_mib(2 * bdp);
  d.streams_needed = d.per_stream_bytes_per_s > 0
                         ? std::max(1u, static_cast<unsigned>(std::ceil(f.target_bytes_per_s / d.per_stream_bytes_per_s)))
                         : 1;
  bool window_limited = d.window_bytes_per_s < f.target_bytes_per_s;
  bool loss_limited = d.loss_bytes_per_s > 0 && d.loss_bytes_per_s < f.target_bytes_per_s;

  if (!window_limited && !loss_limited) {
    d.advice.push_back("one stream can reach the target: the buffers cover the bandwidth-delay product");
    return d;
  }
  if (window_limited) {
    std::string size = std::to_string(d.buffer_needed);
    d.advice.push_back("one stream is capped by its window at " + format_rate_bits(d.window_bytes_per_s) + " (" +
                       format_size(static_cast<std::uint64_t>(d.window_bytes)) + " / " + fmt("%.1f ms", f.rtt_s * 1000) +
                       "); for the target one stream needs " + format_size(d.buffer_needed) + " of buffer:");
    if (sender.tcp_wmem[2] < d.buffer_needed)
      d.advice.push_back("  on " + sender_name + ": sysctl -w net.ipv4.tcp_wmem='4096 " + std::to_string(sender.tcp_wmem[1]) +
                         " " + size + "' net.core.wmem_max=" + size);
    if (receiver.tcp_rmem[2] < d.buffer_needed)
      d.advice.push_back("  on " + receiver_name + ": sysctl -w net.ipv4.tcp_rmem='4096 " + std::to_string(receiver.tcp_rmem[1]) +
                         " " + size + "' net.core.rmem_max=" + size);
    d.advice.push_back("  or without changing the hosts: -p " + std::to_string(d.streams_needed) + " parallel streams");
  }
  if (loss_limited) {
    d.advice.push_back("the loss rate caps one loss-based (reno/cubic) stream near MSS/(RTT*sqrt(p)) = " +
                       format_rate_bits(d.loss_bytes_per_s) + ": use -p " + std::to_string(d.streams_needed) +
                       " streams (each gets its own share), or --congestion bbr where available (" +
                       sender.available_congestion + "); fixing the loss on the path helps most");
  }
  if (d.streams_needed > 64)
    d.advice.push_back("more than 64 streams would be needed: raise the buffers or fix the path first");
  return d;
}

}  // namespace

DoctorAdvice advise(const PathFacts& f) {
  DoctorAdvice a;
  a.bdp_bytes = f.target_bytes_per_s * f.rtt_s;
  a.put = advise_direction(f, f.local, f.remote, "put (this host sends)", "this host", "the server");
  a.get = advise_direction(f, f.remote, f.local, "get (the server sends)", "the server", "this host");
  return a;
}

std::string format_rate_bits(double bytes_per_s) {
  double bits = bytes_per_s * 8;
  if (bits >= 1e9) return fmt("%.2f Gbit/s", bits / 1e9);
  if (bits >= 1e6) return fmt("%.1f Mbit/s", bits / 1e6);
  return fmt("%.0f kbit/s", bits / 1e3);
}

std::string format_doctor(const PathFacts& f, const DoctorAdvice& a) {
  auto host = [](const HostSettings& h) {
    return "  tcp_rmem " + std::to_string(h.tcp_rmem[0]) + " " + std::to_string(h.tcp_rmem[1]) + " " +
           std::to_string(h.tcp_rmem[2]) + ", tcp_wmem " + std::to_string(h.tcp_wmem[0]) + " " +
           std::to_string(h.tcp_wmem[1]) + " " + std::to_string(h.tcp_wmem[2]) + "\n  rmem_max " +
           std::to_string(h.rmem_max) + ", wmem_max " + std::to_string(h.wmem_max) + ", congestion " + h.congestion +
           " (available: " + h.available_congestion + "), MTU " + (h.mtu ? std::to_string(h.mtu) : "unknown") +
           (h.kernel.empty() ? "" : ", " + h.kernel) + "\n";
  };
  std::string out = fmt("round trip: %.2f ms\n", f.rtt_s * 1000);
  out += "this host:\n" + host(f.local) + "server:\n" + host(f.remote);
  out += "target " + format_rate_bits(f.target_bytes_per_s) + ": bandwidth-delay product " +
         format_size(static_cast<std::uint64_t>(a.bdp_bytes)) +
         (f.loss > 0 ? fmt(", loss %.4f %%", f.loss * 100) : std::string()) + "\n";
  if (f.local.mtu && f.local.mtu < 1500) out += "note: the path MTU is " + std::to_string(f.local.mtu) + " (below 1500): every segment carries less\n";
  for (const DirectionAdvice* d : {&a.put, &a.get}) {
    out += d->name + ": one stream " + format_rate_bits(d->per_stream_bytes_per_s) + " (window " +
           format_size(static_cast<std::uint64_t>(d->window_bytes)) + " -> " + format_rate_bits(d->window_bytes_per_s) +
           (d->loss_bytes_per_s > 0 ? ", loss -> " + format_rate_bits(d->loss_bytes_per_s) : std::string()) +
           "), streams for the target: " + std::to_string(d->streams_needed) + "\n";
    for (const auto& line : d->advice) out += "  " + line + "\n";
  }
  return out;
}

}  // namespace pxfer
