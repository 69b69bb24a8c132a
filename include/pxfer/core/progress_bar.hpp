#pragma once
// The one-line progress bar pxfer redraws in place (\r) on a terminal: percentage, bytes, rate and
// time left, for one file or a whole batch. Pure: the caller knows the terminal's width.
#include "pxfer/core/layer.hpp"
#include <cstdint>
#include <string>

namespace pxfer {

struct BarState {
  std::string name;            // one file: its name; a batch: "" (files done/total are shown)
  std::uint64_t bytes = 0;     // moved so far
  std::uint64_t total = 0;     // 0 = unknown (no percentage, no time left)
  double rate_Bps = 0;         // average so far
  std::size_t files_done = 0;  // a batch: finished files ...
  std::size_t files_total = 0; // ... of this many; 0 = one file
};

// "run42.root [=========>          ]  47.3%  484.2 MiB / 1.0 GiB  512.3 MB/s  ETA 0:01", at most
// width - 1 characters (so the cursor never wraps). As the width shrinks the name goes first
// (shortened from the left, then dropped), then the total, then the bytes, then the bar: the rate
// and the time left stay down to about 30 columns.
std::string format_progress_bar(const BarState& state, unsigned width);
// `text` (a list joined by ", ") broken after commas into lines of at most width - 1 characters,
// the later ones indented by two spaces; a piece longer than a line stays whole.
std::string fit_to_width(const std::string& text, unsigned width);
// Seconds left as "0:42", "12:05", "3:02:10"; "--:--" when unknown or beyond 99 hours.
std::string format_eta(double seconds);

}  // namespace pxfer
