// pxfer doctor --json: the measured path and the advice as one NDJSON event, for scripts and for
// `pxfer report`.
#include <nlohmann/json.hpp>

#include "pxfer/core/doctor.hpp"
#include "pxfer/version.hpp"

namespace pxfer {
namespace {

using nlohmann::json;

json host_json(const HostSettings& h) {
  return {{"tcp_rmem", {h.tcp_rmem[0], h.tcp_rmem[1], h.tcp_rmem[2]}},
          {"tcp_wmem", {h.tcp_wmem[0], h.tcp_wmem[1], h.tcp_wmem[2]}},
          {"rmem_max", h.rmem_max},
          {"wmem_max", h.wmem_max},
          {"congestion", h.congestion},
          {"available_congestion", h.available_congestion},
          {"mtu", h.mtu},
          {"kernel", h.kernel}};
}

json direction_json(const DirectionAdvice& d) {
  return {{"name", d.name},
          {"window_bytes", d.window_bytes},
          {"window_Bps", d.window_bytes_per_s},
          {"loss_Bps", d.loss_bytes_per_s},
          {"per_stream_Bps", d.per_stream_bytes_per_s},
          {"streams_needed", d.streams_needed},
          {"buffer_needed", d.buffer_needed},
          {"advice", d.advice}};
}

}  // namespace

std::string format_doctor_json(const std::string& server, const PathFacts& f, const DoctorAdvice& a) {
  return json{{"event", "doctor"},
              {"server", server},
              {"rtt_s", f.rtt_s},
              {"target_Bps", f.target_bytes_per_s},
              {"loss", f.loss},
              {"mss", f.mss},
              {"bdp_bytes", a.bdp_bytes},
              {"local", host_json(f.local)},
              {"remote", host_json(f.remote)},
              {"put", direction_json(a.put)},
              {"get", direction_json(a.get)},
              {"version", pxfer_version()}}
      .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace pxfer
