#pragma once
// The one home for how many data streams a transfer uses (issue 38.3). Every place that decides a
// count calls stream_count() with what it knows; the rest of the code only carries the result:
//   requested  -p N fixes the count; -p auto (the CLI's default) lets the controller pick between
//              a few streams to start with and a ceiling (pxfer/core/stream_controller.hpp)
//   per-file   never more streams than the file has blocks, never fewer than one
//   budget     --max-streams caps files in flight x streams: streams per file shrink to fit
//   negotiated the server's grant in OPEN_OK (admission, --max-streams-per-client) caps it
//   admitted   admitted_streams(): what pxferd's admission grants out of a client's allowance
// Pure: no I/O, so tests/unit/core/stream_count_test.cpp pins it as a table.
#include "pxfer/core/layer.hpp"
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "pxfer/core/limits.hpp"

namespace pxfer {

// What -p said: a fixed count, or auto.
struct StreamRequest {
  bool automatic = false;
  std::uint16_t count = limits::default_streams;  // fixed: the count; auto: unused
  bool operator==(const StreamRequest&) const = default;
};
// "auto" or 1-64; nullopt for anything else.
std::optional<StreamRequest> parse_stream_request(std::string_view text);
std::string to_string(const StreamRequest& request);

struct StreamInputs {
  StreamRequest request;
  unsigned ceiling = 0;          // auto: at most this many streams per file (0 = limits::max_streams)
  unsigned budget = 0;           // --max-streams: files in flight x streams (0 = none)
  unsigned files_in_flight = 1;
  std::optional<std::uint64_t> file_size;  // known: no more streams than blocks
  std::uint32_t block_size = limits::default_block_size;
  std::optional<unsigned> granted;         // the server's grant (OPEN_OK with admission)
};

struct StreamCount {
  std::uint16_t slots = 1;  // what OPEN asks for and the engine's stream slots: fixed count or auto's ceiling
  std::uint16_t start = 1;  // streams attached at the start (= slots when fixed)
  bool automatic = false;
  std::string limited_by;   // what lowered it below the request: "", "file size", "--max-streams", "server"
  bool operator==(const StreamCount&) const = default;
};

StreamCount stream_count(const StreamInputs& in);

// Inputs that ask for `request` (under auto's `ceiling`); the caller sets what else it knows.
inline StreamInputs asking(StreamRequest request, unsigned ceiling = 0) {
  StreamInputs in;
  in.request = request;
  in.ceiling = ceiling;
  return in;
}
// A fixed count, clamped to the limits: -p N, gfal-copy -n N, TPC_START's streams.
std::uint16_t fixed_streams(unsigned asked);

// pxferd's admission: a client's request of `asked` streams when it holds `in_use` of its
// allowance `limit` (0 = none). One that can take fewer gets what is left; one that cannot gets
// all of them when they fit or when it runs nothing else, else none yet (it waits).
unsigned admitted_streams(unsigned asked, bool can_lower, unsigned limit, unsigned in_use);

}  // namespace pxfer
