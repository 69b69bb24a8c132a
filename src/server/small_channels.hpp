#pragma once
// pxferd's side of the small-file channels (cap_small_channel, transfer/small_channel.hpp): a
// control session that asks for one gets a token and the key its ATTACH must prove; the data
// connection that proves it is handed to that session, which reads its puts' bytes from it and
// writes its gets' bytes to it, and closes it when the session ends. A channel is joined once:
// a second ATTACH with the same token, proven or not, is refused and closed.
#include "pxfer/server/layer.hpp"
#include <map>
#include <memory>
#include <mutex>

#include "checksum/block_mac.hpp"
#include "net/connection.hpp"
#include "engine/small_channel.hpp"
#include "wire/wire.hpp"

namespace pxfer::server {

class SmallChannels {
 public:
  // One control session's channel, from SMALL_CHANNEL to the session's end.
  class Slot {
   public:
    Slot(const wire::Token& token, const MacKey& key) : token(token), key(key) {}
    const wire::Token token;
    const MacKey key;  // K of the channel (TLS exporter of the control connection, the token as context)
    // Null until a data connection joined.
    std::shared_ptr<transfer::SmallChannel> channel() const;
    // False (and nothing changes) when a connection joined already.
    bool join(std::shared_ptr<transfer::SmallChannel> channel);

   private:
    mutable std::mutex mutex_;
    std::shared_ptr<transfer::SmallChannel> channel_;
  };

  // A new channel for the session on `control` (a fresh random token), findable until the session
  // drops the slot.
  std::shared_ptr<Slot> open(const net::Connection& control);
  std::shared_ptr<Slot> find(const wire::Token& token) const;

  // ATTACH on a data connection that names a channel's token: the proof checked as any data
  // stream's (block_mac.hpp), then the connection handed to the channel's session. True when it
  // joined (the session owns the connection now); false when it was refused (told why).
  static net::awaitable<bool> join(std::shared_ptr<Slot> slot, std::shared_ptr<net::Connection> conn,
                                   const wire::Attach& attach, std::chrono::milliseconds deadline);

 private:
  mutable std::mutex mutex_;
  std::map<wire::Token, std::weak_ptr<Slot>> slots_;
};

}  // namespace pxfer::server
