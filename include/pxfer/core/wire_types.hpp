#pragma once
// The protocol values a program using the library sees: which way a transfer goes, a data
// stream's TCP figures (what --stream-stats prints) and the kind of a directory entry (what
// `pxfer ls` prints). They live
// here, public, so that the wire format itself (src/wire/wire.hpp) stays internal; wire.hpp takes
// them by name.
#include "pxfer/core/layer.hpp"
#include <cstdint>

namespace pxfer {

// Which way a file moves, seen from the client: put sends it, get receives it.
enum class Direction { put, get };

// The sending side's view of one data stream (TCP_INFO and SIOCOUTQ), for --stream-stats.
struct StreamFigures {
  std::uint16_t stream = 0;
  std::uint64_t bytes = 0;          // payload bytes moved on this stream so far
  std::uint32_t cwnd = 0;           // segments
  std::uint32_t mss = 0;
  std::uint32_t rtt_us = 0;
  std::uint32_t retransmits = 0;    // total retransmitted segments
  std::uint32_t unsent = 0;         // Send-Q not yet sent
  std::uint32_t sndbuf = 0;         // current SO_SNDBUF
  std::uint64_t delivery_rate = 0;  // bytes/s, the kernel's estimate
  bool operator==(const StreamFigures&) const = default;
};

enum class EntryKind : std::uint8_t { file = 1, directory = 2 };

}  // namespace pxfer
