#pragma once
// The process_* metrics every Prometheus client library exports (prometheus.io "Writing client
// libraries", standard and runtime collectors), read from /proc/self on each scrape.
#include "pxfer/server/layer.hpp"
#include <string>

namespace pxfer::server {

// Appends process_cpu_seconds_total, process_resident_memory_bytes, process_virtual_memory_bytes,
// process_open_fds, process_max_fds and process_start_time_seconds to `out`.
void append_process_metrics(std::string& out);

}  // namespace pxfer::server
