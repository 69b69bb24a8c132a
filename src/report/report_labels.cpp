// Names for runs shown side by side: the options that differ ("put -p 4 -w 87380" against
// "put -p 4 -w 1M"), then the input's name where the options are the same.
#include <map>

#include "pxfer/core/report_model.hpp"

namespace pxfer::report {
namespace {

// As a user would type it: 1M, 64K, 87380.
std::string size_option(double v) {
  auto n = static_cast<std::uint64_t>(v);
  if (n >= (1u << 20) && n % (1u << 20) == 0) return std::to_string(n >> 20) + "M";
  if (n >= 1024 && n % 1024 == 0) return std::to_string(n >> 10) + "K";
  return std::to_string(n);
}

}  // namespace

std::string describe_options(const RunMeta& m, bool with_congestion) {
  if (!m.command.empty()) return m.command;
  if (m.kind == RunKind::doctor) return "doctor " + m.hosts;
  std::string out = m.kind == RunKind::sweep ? "sweep " : "";
  out += m.direction.empty() ? std::string("transfer") : m.direction;
  if (m.kind == RunKind::sweep) return out;
  if (m.kind == RunKind::batch) out += " -r";
  if (m.streams) out += " -p " + std::to_string(m.streams);
  if (m.kind == RunKind::batch && m.max_in_flight) out += " -c " + std::to_string(m.max_in_flight);
  if (m.kind == RunKind::transfer) out += " -w " + (m.window_requested > 0 ? size_option(m.window_requested) : std::string("0"));
  if (with_congestion && !m.congestion.empty()) out += " --congestion " + m.congestion;
  return out;
}

void label_runs(std::vector<Run>& runs) {
  // The congestion control is in every summary, the system default too: named only where it differs.
  bool congestion_differs = false;
  for (const auto& r : runs) congestion_differs = congestion_differs || r.meta.congestion != runs.front().meta.congestion;
  std::map<std::string, unsigned> seen;
  for (auto& r : runs) {
    if (r.label.empty()) r.label = describe_options(r.meta, congestion_differs);
    ++seen[r.label];
  }
  for (auto& r : runs)
    if (seen[r.label] > 1 && !r.name.empty()) r.label += " (" + r.name + ")";
}

}  // namespace pxfer::report
