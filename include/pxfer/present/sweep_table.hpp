#pragma once
// The cells of a files x streams sweep (pxfer sweep, pxfer/client/sweep.hpp) and their tables: the
// printers' half, below the client that fills the cells.
#include "pxfer/present/layer.hpp"
#include <cstdint>
#include <string>
#include <vector>

#include "pxfer/core/compression.hpp"
#include "pxfer/engine/transfer_events.hpp"  // Direction

namespace pxfer {

struct SweepCell {
  Direction direction = Direction::get;
  std::uint32_t window = 0;
  std::string congestion;
  CompressionSetting compression;
  unsigned files = 0;
  unsigned streams = 0;  // 0 = -p auto
  std::vector<double> rates_mbit;  // one per successful repeat: all bytes / wall time
  unsigned runs = 0;
  unsigned failures = 0;           // transfers that failed, over all repeats
  double median_mbit() const;
};

// One table per (direction, window, congestion): files down, streams across,
// "rate Mbit/s (failures)" per cell, as the site reports show it.
std::string format_sweep_tables(const std::vector<SweepCell>& cells);
std::string format_sweep_csv(const std::vector<SweepCell>& cells);
std::string format_sweep_json(const std::vector<SweepCell>& cells);

}  // namespace pxfer
