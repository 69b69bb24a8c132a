#include "forwarder.hpp"

#include <poll.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

namespace wanem {
namespace {

// Packets read per wake-up before the due ones are written: amortises the poll() call
// without letting one direction hog its thread for long.
constexpr int kReadBurst = 32;

// The kernel adds up to 50 us of slack to every timed sleep by default; release times
// are meant to be met to a few microseconds.
constexpr unsigned long kTimerSlackNanos = 1000;

// Per-record overhead in the ring, rounded generously: small packets (ACKs) carry a
// relatively large header.
constexpr std::size_t kRingOverheadFactor = 2;

constexpr double kAssumedMaxRateBps = 10e9;
constexpr std::size_t kMinRingBytes = 8u << 20;
constexpr std::size_t kMaxDefaultRingBytes = 1u << 30;

}  // namespace

std::size_t default_ring_bytes(const LinkParams& params, std::size_t mtu) {
  const double rate = params.rate_bps > 0 ? static_cast<double>(params.rate_bps) : kAssumedMaxRateBps;
  double bytes = rate / 8 * static_cast<double>(params.delay) / kNanosPerSecond;
  if (params.rate_bps > 0) {
    bytes += params.queue.unit == QueueLimit::Unit::kBytes ? static_cast<double>(params.queue.value)
                                                           : static_cast<double>(params.queue.value * mtu);
  }
  bytes *= kRingOverheadFactor;
  return std::clamp(static_cast<std::size_t>(bytes), kMinRingBytes, kMaxDefaultRingBytes);
}

Forwarder::Forwarder(std::string label, int source_fd, int sink_fd, StopSignal& stop, const LinkParams& params,
                     std::uint64_t seed, std::size_t ring_bytes, std::size_t mtu)
    : label_(std::move(label)),
      source_fd_(source_fd),
      sink_fd_(sink_fd),
      stop_(stop),
      model_(params, seed),
      // One spare byte per slot tells a packet larger than the MTU from one that fits.
      ring_(ring_bytes, mtu + 1),
      mtu_(mtu),
      discard_buffer_(mtu + 1) {}

void Forwarder::run() {
  prctl(PR_SET_TIMERSLACK, kTimerSlackNanos);
  pollfd fds[2] = {{source_fd_, POLLIN, 0}, {stop_.fd(), POLLIN, 0}};
  while (!stop_.requested()) {
    release_due_packets(monotonic_now());
    if (read_burst() > 0) continue;  // more may be waiting, and zero-delay packets are due now

    timespec timeout{};
    timespec* timeout_ptr = nullptr;  // nothing queued: sleep until a packet arrives
    if (!ring_.empty()) {
      const Nanos wait = ring_.front_release_at() - monotonic_now();
      if (wait <= 0) continue;
      timeout = to_timespec(wait);
      timeout_ptr = &timeout;
    }
    if (::ppoll(fds, 2, timeout_ptr, nullptr) < 0 && errno != EINTR) {
      fail("poll", errno);
    }
  }
  counters_.in_flight_at_exit_packets = ring_.size();
}

void Forwarder::release_due_packets(Nanos now) {
  while (!ring_.empty() && ring_.front_release_at() <= now) {
    const auto packet = ring_.front_packet();
    const ssize_t written = ::write(sink_fd_, packet.data(), packet.size());
    if (written == static_cast<ssize_t>(packet.size())) {
      ++counters_.forwarded_packets;
      counters_.forwarded_bytes += packet.size();
    } else {
      // A refused write loses one packet, like a NIC error; it does not stop the link.
      ++counters_.write_failed_packets;
      if (!reported_write_error_) {
        reported_write_error_ = true;
        std::fprintf(stderr, "pxfer-wanem: %s: writing a packet to the TUN device failed: %s (counted, continuing)\n",
                     label_.c_str(), written < 0 ? std::strerror(errno) : "short write");
      }
    }
    ring_.pop_front();
  }
}

std::size_t Forwarder::read_burst() {
  std::size_t accepted = 0;
  for (int i = 0; i < kReadBurst; ++i) {
    std::byte* slot = ring_.reserve();
    const bool ring_full = slot == nullptr;
    std::byte* target = ring_full ? discard_buffer_.data() : slot;
    const ssize_t n = ::read(source_fd_, target, mtu_ + 1);
    if (n < 0) {
      if (errno == EAGAIN || errno == EINTR) break;
      // EBADFD: the device is gone, typically because its namespace was deleted.
      fail(errno == EBADFD ? "the TUN device disappeared (namespace deleted under the running link?)"
                           : "reading from the TUN device",
           errno);
      break;
    }
    if (n == 0) break;
    const Nanos now = monotonic_now();
    const auto length = static_cast<std::size_t>(n);
    ++counters_.received_packets;
    counters_.received_bytes += length;
    ++accepted;  // counts reads, so the caller keeps draining even when all are dropped

    if (length > mtu_) {
      ++counters_.oversize_dropped_packets;
      continue;
    }
    if (ring_full) {
      ++counters_.ring_full_dropped_packets;
      continue;
    }
    Nanos release_at = 0;
    switch (model_.admit(now, length, release_at)) {
      case Verdict::kForward:
        ring_.commit(length, release_at);
        break;
      case Verdict::kLost:
        ++counters_.lost_packets;
        break;
      case Verdict::kQueueFull:
        ++counters_.queue_dropped_packets;
        break;
    }
  }
  return accepted;
}

void Forwarder::fail(const std::string& what, int error_number) {
  if (error_.empty()) error_ = label_ + ": " + what + ": " + std::strerror(error_number);
  stop_.request();
}

}  // namespace wanem
