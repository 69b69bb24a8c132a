#include "small_channels.hpp"

#include <spdlog/spdlog.h>

#include "net/frame_io.hpp"
#include "net/tls.hpp"
#include "pxfer/io/socket_tuning.hpp"

namespace pxfer::server {

std::shared_ptr<transfer::SmallChannel> SmallChannels::Slot::channel() const {
  std::lock_guard lock(mutex_);
  return channel_;
}

bool SmallChannels::Slot::join(std::shared_ptr<transfer::SmallChannel> channel) {
  std::lock_guard lock(mutex_);
  if (channel_) return false;
  channel_ = std::move(channel);
  return true;
}

std::shared_ptr<SmallChannels::Slot> SmallChannels::open(const net::Connection& control) {
  const AttachNonce random = random_nonce();
  wire::Token token{};
  std::copy_n(random.begin(), token.size(), token.begin());
  const MacKey key = net::export_keying_material(control, std::string(data_exporter_label), token);
  auto slot = std::make_shared<Slot>(token, key);
  std::lock_guard lock(mutex_);
  std::erase_if(slots_, [](const auto& entry) { return entry.second.expired(); });
  slots_[token] = slot;
  return slot;
}

std::shared_ptr<SmallChannels::Slot> SmallChannels::find(const wire::Token& token) const {
  std::lock_guard lock(mutex_);
  auto it = slots_.find(token);
  return it == slots_.end() ? nullptr : it->second.lock();
}

net::awaitable<bool> SmallChannels::join(std::shared_ptr<Slot> slot, std::shared_ptr<net::Connection> conn,
                                         const wire::Attach& attach, std::chrono::milliseconds deadline) {
  const AttachNonce nonce = random_nonce();
  wire::Message challenge = wire::AttachChallenge{nonce};
  co_await net::send_message(*conn, challenge);
  auto reply = co_await net::read_login_message_within(*conn, deadline);
  auto* proof = reply ? std::get_if<wire::AttachProof>(&*reply) : nullptr;
  const bool proven = attach.stream == 0 && proof &&
                      equal_constant_time(proof->mac, attach_proof(slot->key, attach.token, attach.stream, nonce));
  if (proven) conn->mark_logged_in();
  auto channel = proven ? std::make_shared<transfer::SmallChannel>(conn, transfer::small_channel_keys(slot->key, nonce),
                                                                   transfer::SmallChannel::End::server)
                        : nullptr;
  // Joined before ATTACH_OK: the client sends its first request only after that, and the session
  // must find the channel when it reads it.
  if (!channel || !slot->join(channel)) {
    channel.reset();  // a second connection for a joined channel: closed (the joined one goes on)
    spdlog::warn("client={} small-file channel refused: {}", conn->peer(),
                 proven ? "the channel is joined already" : "no valid proof of the session's key");
    Error refused(Errc::permission, "unknown or expired session token");
    co_await net::send_error_quietly(*conn, refused);
    co_return false;
  }
  const BufferGrant buffers = read_buffers(conn->socket().native_handle());
  wire::Message ok = wire::AttachOk{buffers.sndbuf, buffers.rcvbuf};
  co_await net::send_message(*conn, ok);
  co_return true;
}

}  // namespace pxfer::server
