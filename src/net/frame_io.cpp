#include "frame_io.hpp"

#include <array>

#include "pxfer/core/limits.hpp"
#include "quiet_wait.hpp"
#include "race.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <vector>

namespace pxfer::net {

awaitable<wire::FrameHeader> read_header(Connection& conn) {
  std::array<std::uint8_t, wire::header_size> bytes{};
  co_await conn.read_exact(bytes);
  wire::FrameHeader header;
  auto status = wire::decode_header(bytes, header);
  if (status != wire::DecodeStatus::ok)
    throw Error(Errc::protocol, "bad frame from " + conn.peer() + ": " + wire::to_string(status) +
                                    " (is this a pxfer server?)");
  co_return header;
}

awaitable<wire::Message> read_payload(Connection& conn, const wire::FrameHeader& header) {
  if (header.type == wire::FrameType::block)
    throw Error(Errc::protocol, "unexpected BLOCK frame from " + conn.peer());
  // decode_header bounded the length by its type: at most max_control_payload, or
  // max_small_payload for a small file's frame.
  auto payload = wire::Blob::uninitialized(header.length);  // not zero-filled: read over at once
  co_await conn.read_exact(payload);
  wire::Message message;
  auto status = wire::decode_message(header, std::move(payload), message);  // a small file's bytes: not copied
  if (status != wire::DecodeStatus::ok)
    throw Error(Errc::protocol, std::string("bad ") + wire::type_name(header.type) + " frame from " + conn.peer() +
                                    ": " + wire::to_string(status));
  co_return message;
}

awaitable<wire::Message> read_message(Connection& conn) {
  auto header = co_await read_header(conn);
  co_return co_await read_payload(conn, header);
}

namespace {
bool allowed_before_login(wire::FrameType type) {
  using wire::FrameType;
  return type == FrameType::hello || type == FrameType::auth || type == FrameType::attach ||
         type == FrameType::attach_proof || type == FrameType::ping;
}

awaitable<wire::Message> read_login_message(Connection& conn) {
  auto header = co_await read_header(conn);
  if (!allowed_before_login(header.type) || header.length > limits::max_login_frame)
    throw Error(Errc::protocol, std::string("unexpected ") + wire::type_name(header.type) + " frame of " +
                                    std::to_string(header.length) + " bytes from " + conn.peer() +
                                    " before it logged in (expected HELLO, AUTH or ATTACH)");
  co_return co_await read_payload(conn, header);
}

// Cancelled (the read came first), it ends quietly: a thrown operation_aborted, rethrown through
// each coroutine frame above it, cost more than the read it watched (docs/performance.md
// section 5). first_of tells a cancellation from outside apart (net/race.hpp).
awaitable<void> sleep_for(std::chrono::milliseconds duration) {
  co_await asio::this_coro::throw_if_cancelled(false);  // else the cancelled wait still throws on resuming
  asio::steady_timer timer(co_await asio::this_coro::executor, duration);
  co_await wait_unless_cancelled(timer);
}
}  // namespace

awaitable<std::optional<wire::Message>> read_message_within(Connection& conn, std::chrono::milliseconds timeout) {
  co_return co_await first_of(read_message(conn), sleep_for(timeout));
}

awaitable<std::optional<wire::Message>> read_login_message_within(Connection& conn, std::chrono::milliseconds timeout) {
  co_return co_await first_of(read_login_message(conn), sleep_for(timeout));
}

namespace {
// One writer at a time on a connection (the write gate), so frames are never interleaved.
awaitable<void> write_gated_parts(Connection& conn, std::span<const std::span<const std::uint8_t>> parts) {
  co_await conn.write_gate().acquire();
  struct Release {
    WriteGate& gate;
    ~Release() { gate.release(); }
  } release{conn.write_gate()};
  co_await conn.write_parts(parts);
}
awaitable<void> write_gated(Connection& conn, std::span<const std::uint8_t> bytes) {
  const std::array<std::span<const std::uint8_t>, 1> parts{bytes};
  co_await write_gated_parts(conn, parts);
}
}  // namespace

awaitable<void> send_message(Connection& conn, const wire::Message& message) {
  auto bytes = wire::encode(message);
  co_await write_gated(conn, bytes);
}

awaitable<void> send_messages(Connection& conn, const std::vector<wire::Message>& messages) {
  // Written in runs of about 256 KiB: many short answers leave in one write, and a run of large
  // ones is never copied whole into one buffer. Each run takes the gate on its own: the frames
  // of one call go out in order, and another writer's frame may only fall between whole frames.
  // A small file's bytes (the byte string that ends PUT_SMALL, GET_SMALL_OK and SMALL_DATA) are
  // not copied into the run: the run's write gathers them from where they were read
  // (docs/performance.md section 25).
  constexpr std::size_t run = 256 * 1024;
  constexpr std::size_t copied_below = 4096;  // shorter ones cost less copied than as a piece of their own
  std::vector<std::uint8_t> heads;
  struct Piece {
    std::size_t head_end;                 // heads[previous head_end, head_end) goes first
    std::span<const std::uint8_t> bytes;  // then these
  };
  std::vector<Piece> pieces;
  std::size_t run_bytes = 0;
  auto flush = [&]() -> awaitable<void> {
    std::vector<std::span<const std::uint8_t>> parts;
    parts.reserve(2 * pieces.size() + 1);
    std::size_t from = 0;
    for (const auto& p : pieces) {
      if (p.head_end > from) parts.emplace_back(heads.data() + from, p.head_end - from);
      parts.push_back(p.bytes);
      from = p.head_end;
    }
    if (heads.size() > from) parts.emplace_back(heads.data() + from, heads.size() - from);
    co_await write_gated_parts(conn, parts);
    heads.clear();
    pieces.clear();
    run_bytes = 0;
  };
  for (const auto& m : messages) {
    const std::size_t before = heads.size();
    std::span<const std::uint8_t> tail = wire::encode_append_head(m, heads);
    if (!tail.empty() && tail.size() < copied_below) {
      heads.insert(heads.end(), tail.begin(), tail.end());
      tail = {};
    }
    if (!tail.empty()) pieces.push_back(Piece{heads.size(), tail});
    run_bytes += heads.size() - before + tail.size();
    if (run_bytes >= run) co_await flush();
  }
  if (run_bytes > 0) co_await flush();
}

awaitable<void> send_error_quietly(Connection& conn, const Error& error) {
  try {
    wire::Message message = wire::ErrorMsg{static_cast<std::uint16_t>(error.code()), error.what()};
    co_await send_message(conn, message);
  } catch (...) {
  }
}

}  // namespace pxfer::net
