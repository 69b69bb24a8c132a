#pragma once
// Negotiation in one unit. The client's options and the server's HELLO_OK make an OPEN; an OPEN
// and the server's policy make the engine's settings on the server; OPEN_OK and the options make
// them on the client. Limits come from pxfer/core/limits.hpp. Pure: no sockets, no files.
#include "pxfer/core/layer.hpp"
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "pxfer/core/client_options.hpp"
#include "pxfer/core/wire_types.hpp"
#include "wire/wire.hpp"
#include "plan/settings.hpp"

namespace pxfer::transfer {

// Options within the option table's bounds (pxfer/core/option_table.hpp, check()); throws
// Error(usage) otherwise ("--streams 0: use 1 to 64, or auto").
void check_options(const ClientOptions& options);

// What the client knows of the file it sends (a put).
struct SourceFacts {
  std::uint64_t size = 0;
  std::int64_t mtime_ns = 0;
};

// OPEN for `path`, from the options, the server's hello and, for a put, the source. Throws
// Error(usage) when the block size is over the server's limit.
wire::Open make_open(Direction direction, const ClientOptions& options, const wire::HelloOk& server,
                     const std::optional<SourceFacts>& source, const std::string& path);

// The socket options every data connection of the client's is made with (window, congestion
// control, window clamp): a connection made before OPEN_OK (client/early_streams.hpp) or kept from
// an earlier file is used only when it was made the same way.
SocketTuning client_tuning(const ClientOptions& options);

// The data connections worth opening while OPEN crosses the path: the streams the transfer will
// attach first, as far as the client can tell before OPEN_OK. None for a put with nothing to move
// or one moving on the control connection; a get's size is not known yet, so a small file's go
// unused to the session's pool.
std::uint16_t early_stream_count(const ClientOptions& options, const wire::Open& open);

// What the client runs after OPEN_OK: the server's block size and the streams it granted (fewer
// than asked: its per-client limit, or a file of fewer blocks).
struct ClientPlan {
  Settings settings;
  std::uint16_t start_streams = 1;  // streams attached at first: all of them unless -p auto
  bool on_control = false;  // the file moves on the control connection (wire::moves_on_control)
  std::string warning;      // "" unless the server's limit, not the file's size, cut the streams
};
// `caps`: the capabilities both ends confirmed in HELLO / HELLO_OK.
ClientPlan client_plan(const ClientOptions& options, const wire::Open& open, const wire::OpenOk& ok,
                       std::uint64_t caps = 0);

// The server's side of it.
struct ServerPolicy {
  std::chrono::milliseconds attach_timeout{30'000};
};

// The engine's settings for an OPEN; refuses (Error protocol) flags or a checksum this server does
// not know, so that an option a newer client relies on is never silently ignored.
Settings server_settings(const wire::Open& open, const ServerPolicy& policy, std::uint64_t caps = 0);

// A get's streams: no more than the file's blocks, for a client that takes the granted count
// from OPEN_OK (cap_admission); a put's the client caps itself, knowing the size.
std::uint16_t server_get_streams(const wire::Open& open, std::uint64_t caps, std::uint64_t file_size);

// Whether the file moves on the control connection: both ends can, the client asked, one block.
bool server_on_control(const wire::Open& open, std::uint64_t caps, std::uint64_t file_size);

}  // namespace pxfer::transfer
