#pragma once
// `pxfer report` / `--report FILE.html`: one self-contained HTML page (inline SVG, inline CSS, no
// scripts, nothing fetched) from one or more runs. Pure: the caller writes the string.
#include "pxfer/core/layer.hpp"
#include <string>
#include <vector>

#include "pxfer/core/report_model.hpp"
#include "pxfer/core/transfer_limit.hpp"

namespace pxfer::report {

struct PageOptions {
  std::string title = "pxfer report";
  std::string generated;  // when the page was made (ISO 8601), shown under the title
};

// Labels the runs (label_runs) and renders: what was measured, the aggregate rate over time of
// every run on one chart (file starts and ends marked for batches), files over time, the
// per-stream charts (rate stacked, cwnd, RTT, retransmits, Send-Q) and the sweep heatmaps.
std::string render_page(std::vector<Run> runs, const PageOptions& options);

// The charts of the page, one SVG string each (also for tests and for docs/).
std::string aggregate_rate_chart(const std::vector<Run>& runs);
std::vector<std::string> stream_charts(const Run& run);
std::string files_chart(const Run& run);
std::vector<std::string> sweep_heatmaps(const Run& run);
// What limited the runs: per transfer or batch run the likely limit in one sentence with its
// evidence, then the final-rate bar comparing them (report_limit.cpp); "" when no run moved data.
std::string limits_section(const std::vector<Run>& runs);
LimitEvidence limit_evidence(const Run& run);
std::string final_rate_chart(const std::vector<Run>& runs);

}  // namespace pxfer::report
