#include "small_channel.hpp"

#include <spdlog/spdlog.h>

#include <optional>

#include "net/frame_io.hpp"
#include "wire/byte_codec.hpp"

namespace pxfer::transfer {
namespace {

// What a tag covers before the bytes: the request's id and the size, big-endian (the codec's writer).
std::vector<std::uint8_t> frame_header(std::uint32_t id, std::size_t size) {
  std::vector<std::uint8_t> out;
  wire::detail::Writer w(out);
  w.u32(id);
  w.u32(static_cast<std::uint32_t>(size));
  return out;
}

}  // namespace

SmallChannelKeys small_channel_keys(const MacKey& channel_key, const AttachNonce& nonce) {
  return SmallChannelKeys{stream_block_key(channel_key, 0, nonce), stream_block_key(channel_key, 1, nonce)};
}

SmallChannel::SmallChannel(std::shared_ptr<net::Connection> conn, const SmallChannelKeys& keys, End end)
    : conn_(std::move(conn)),
      send_(end == End::client ? keys.up : keys.down),
      receive_(end == End::client ? keys.down : keys.up) {}

SmallChannel::~SmallChannel() { conn_->close(); }

wire::SmallData SmallChannel::seal(std::uint32_t id, wire::Blob data) {
  wire::SmallData frame;
  frame.id = id;
  send_.begin(frame_header(id, data.size()));
  send_.update(data);
  frame.tag = send_.finish();
  frame.data = std::move(data);
  return frame;
}

net::awaitable<void> SmallChannel::send(const std::vector<wire::Message>& frames) {
  co_await net::send_messages(*conn_, frames);
}

net::awaitable<wire::Blob> SmallChannel::receive(std::uint32_t id, std::chrono::milliseconds deadline) {
  std::optional<wire::Message> next;
  if (deadline.count() > 0) next = co_await net::read_message_within(*conn_, deadline);
  else next = co_await net::read_message(*conn_);
  if (!next)
    throw Error(Errc::network, "small-file channel from " + conn_->peer() + ": the bytes of request " +
                                   std::to_string(id) + " did not come within " +
                                   std::to_string(deadline.count() / 1000) + " s");
  auto frame = net::expect<wire::SmallData>(std::move(*next), conn_->peer());
  receive_.begin(frame_header(frame.id, frame.data.size()));
  receive_.update(frame.data);
  if (!receive_.verify(frame.tag)) {
    spdlog::warn("small-file channel from {}: request {} failed its tag; the channel and its session end",
                 conn_->peer(), frame.id);
    throw Error(Errc::integrity, "small-file channel from " + conn_->peer() +
                                     ": a file's bytes failed their authentication tag (altered on the way?)");
  }
  if (frame.id != id)
    throw Error(Errc::protocol, "small-file channel from " + conn_->peer() + ": bytes of request " +
                                    std::to_string(frame.id) + " where " + std::to_string(id) + " was next");
  co_return std::move(frame.data);
}

}  // namespace pxfer::transfer
