#include "plan/negotiate.hpp"

#include <algorithm>
#include <cstdio>

#include "pxfer/common/error.hpp"
#include "pxfer/core/option_table.hpp"
#include "pxfer/core/stream_count.hpp"
#include "pxfer/core/stream_controller.hpp"

namespace pxfer::transfer {
namespace {

constexpr std::uint64_t on_control_caps = wire::cap_on_control | wire::cap_admission;

std::string hex(std::uint32_t value) {
  char text[16];
  std::snprintf(text, sizeof text, "0x%x", value);
  return text;
}

}  // namespace

// The bounds are the option table's (pxfer/core/option_table.hpp), written once for the CLI, the
// gfal2 plugin and a library caller that filled ClientOptions itself.
void check_options(const ClientOptions& o) { check(o); }

wire::Open make_open(Direction direction, const ClientOptions& opt, const wire::HelloOk& server,
                     const std::optional<SourceFacts>& source, const std::string& path) {
  if (opt.block_size > server.max_block)
    throw Error(Errc::usage, "block size " + std::to_string(opt.block_size) + " is over the server's limit of " +
                                 std::to_string(server.max_block) + " bytes");
  wire::Open open;
  open.direction = direction == Direction::put ? wire::Direction::put : wire::Direction::get;
  open.checksum = static_cast<std::uint8_t>(opt.checksum);
  if (opt.overwrite) open.flags |= wire::open_overwrite;
  if (opt.encrypt) open.flags |= wire::open_encrypt;
  if (!opt.resume) open.flags |= wire::open_no_resume;
  if (opt.sync) open.flags |= wire::open_sync;
  // A file of one block moves on this (kept, already warm) control connection when both ends can:
  // no data connection to open and attach per small file. The server decides a get by its size.
  if (opt.small_files_on_control && (server.capabilities & on_control_caps) == on_control_caps &&
      (!source || source->size <= opt.block_size))
    open.flags |= wire::open_on_control;
  StreamInputs count = asking(StreamRequest{opt.auto_streams, opt.streams}, opt.max_streams);
  count.block_size = opt.block_size;
  if (source) count.file_size = source->size;
  open.streams = stream_count(count).slots;
  open.block_size = opt.block_size;
  open.window = opt.window;
  open.congestion = opt.congestion;
  open.window_clamp = opt.window_clamp;
  open.compress_mode = static_cast<std::uint8_t>(opt.compression.mode);
  open.compress_level = static_cast<std::uint8_t>(opt.compression.level);
  if ((opt.stream_stats || opt.auto_streams) && direction == Direction::get) {
    open.flags |= wire::open_want_stats;  // the server sends: only it sees cwnd, Send-Q, retransmits
    // -p auto reads RTT and retransmits from them at each of its looks, --stream-stats at each line.
    auto every = opt.stream_stats ? opt.perf_interval : std::chrono::milliseconds(500);
    if (opt.auto_streams) every = std::min<std::chrono::milliseconds>(every, stream_sample_period);
    open.stats_interval_ms = static_cast<std::uint32_t>(every.count());
  }
  open.size = source ? source->size : 0;
  open.mtime_ns = source ? source->mtime_ns : 0;
  open.stall_timeout_ms = static_cast<std::uint32_t>(opt.stall_timeout.count());
  open.path = path;
  return open;
}

SocketTuning client_tuning(const ClientOptions& opt) { return SocketTuning{opt.window, opt.congestion, opt.window_clamp}; }

std::uint16_t early_stream_count(const ClientOptions& opt, const wire::Open& open) {
  if (open.direction == wire::Direction::put && (open.size == 0 || (open.flags & wire::open_on_control))) return 0;
  // open.streams is the ceiling already (-p, --max-streams, a put's blocks); -p auto starts lower.
  return stream_count(asking(StreamRequest{opt.auto_streams, open.streams}, open.streams)).start;
}

ClientPlan client_plan(const ClientOptions& opt, const wire::Open& open, const wire::OpenOk& ok, std::uint64_t caps) {
  StreamInputs count = asking(StreamRequest{opt.auto_streams, open.streams}, open.streams);
  if (ok.has_admission) count.granted = ok.streams;
  const StreamCount decided = stream_count(count);
  const std::uint16_t streams = decided.slots;
  ClientPlan plan;
  plan.start_streams = decided.start;
  plan.settings = Settings{.checksum = opt.checksum,
                           .block_size = ok.block_size,
                           .streams = streams,
                           .tuning = client_tuning(opt),
                           .compression = opt.compression};
  plan.settings.stall_timeout = opt.stall_timeout;
  plan.settings.control_heartbeats = (caps & wire::cap_heartbeat) != 0;
  plan.settings.tls_bound_streams = (caps & wire::cap_tls_bound_streams) != 0;
  plan.settings.retire_streams = (caps & wire::cap_retire_streams) != 0;
  plan.settings.block_copies = (caps & wire::cap_block_copies) != 0;
  plan.on_control = wire::moves_on_control(open.flags, ok.size, ok.block_size);
  // Fewer streams than blocks is the server's limit; fewer than asked but enough for every block
  // is only the file being small.
  // Under -p auto the grant only lowers the ceiling: nothing the user asked for was refused.
  if (!opt.auto_streams && ok.has_admission && streams < open.streams && streams < std::max<std::uint64_t>(1, limits::block_count(ok.size, ok.block_size)))
    plan.warning = "the server granted " + std::to_string(streams) + " of " + std::to_string(open.streams) +
                   " streams (its per-client stream limit)";
  return plan;
}

Settings server_settings(const wire::Open& open, const ServerPolicy& policy, std::uint64_t caps) {
  if (open.flags & ~wire::known_open_flags)
    throw Error(Errc::protocol, "OPEN asks for options this server does not know (flags " +
                                    hex(open.flags & ~wire::known_open_flags) + "); upgrade pxferd or leave those options out");
  if (open.checksum > last_checksum_algo)
    throw Error(Errc::protocol, "unknown checksum algorithm " + std::to_string(open.checksum));
  Settings settings{.checksum = static_cast<ChecksumAlgo>(open.checksum),
                    .block_size = open.block_size,
                    .streams = open.streams,
                    .tuning = SocketTuning{open.window, open.congestion, open.window_clamp},
                    .attach_timeout = policy.attach_timeout,
                    .compression = CompressionSetting{static_cast<CompressMode>(open.compress_mode), open.compress_level}};
  if (open.flags & wire::open_want_stats)
    settings.stats_interval = std::chrono::milliseconds(std::max<std::uint32_t>(open.stats_interval_ms, 100));
  // The client's stall timeout, within sane bounds: heartbeats go four times per period.
  if (open.stall_timeout_ms > 0)
    settings.stall_timeout = std::chrono::milliseconds(std::clamp<std::uint32_t>(open.stall_timeout_ms, 400, 3'600'000));
  settings.control_heartbeats = (caps & wire::cap_heartbeat) != 0;
  settings.tls_bound_streams = (caps & wire::cap_tls_bound_streams) != 0;
  settings.retire_streams = (caps & wire::cap_retire_streams) != 0;
  settings.block_copies = (caps & wire::cap_block_copies) != 0;
  return settings;
}

std::uint16_t server_get_streams(const wire::Open& open, std::uint64_t caps, std::uint64_t file_size) {
  if (!(caps & wire::cap_admission)) return open.streams;
  StreamInputs count = asking(StreamRequest{false, open.streams});
  count.file_size = file_size;
  count.block_size = open.block_size;
  return stream_count(count).slots;
}

bool server_on_control(const wire::Open& open, std::uint64_t caps, std::uint64_t file_size) {
  return (caps & on_control_caps) == on_control_caps && wire::moves_on_control(open.flags, file_size, open.block_size);
}

}  // namespace pxfer::transfer
