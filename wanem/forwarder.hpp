#pragma once
// One direction of the link: reads packets from the source TUN device, lets the
// LinkModel decide their fate, keeps the survivors in a PacketRing and writes each to
// the sink TUN device when its release time comes. One thread per direction, so the two
// directions never wait on each other.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "counters.hpp"
#include "link_model.hpp"
#include "packet_ring.hpp"
#include "stop_signal.hpp"

namespace wanem {

class Forwarder {
 public:
  Forwarder(std::string label, int source_fd, int sink_fd, StopSignal& stop, const LinkParams& params,
            std::uint64_t seed, std::size_t ring_bytes, std::size_t mtu);

  // Forwards until stop is requested. On a fatal I/O error, records it in error() and
  // requests the stop itself, so the whole link shuts down rather than half of it.
  void run();

  const DirectionCounters& counters() const { return counters_; }
  const std::string& error() const { return error_; }

 private:
  void release_due_packets(Nanos now);
  std::size_t read_burst();
  void fail(const std::string& what, int error_number);

  std::string label_;
  int source_fd_;
  int sink_fd_;
  StopSignal& stop_;
  LinkModel model_;
  PacketRing ring_;
  std::size_t mtu_;
  std::vector<std::byte> discard_buffer_;  // where packets go when the ring is full
  DirectionCounters counters_;
  std::string error_;
  bool reported_write_error_ = false;
};

// Ring size that holds everything one direction can have in flight: the queue plus what
// the delay line holds at the rate (10 Gbit/s assumed when unlimited), plus headroom.
std::size_t default_ring_bytes(const LinkParams& params, std::size_t mtu);

}  // namespace wanem
