#pragma once
// The small-file channel (cap_small_channel, docs/protocol.md "Small files"): one clear data
// connection beside a control connection that carries the bytes of its PUT_SMALL and GET_SMALL_OK
// frames, each file's bytes in a SMALL_DATA frame under a Poly1305 tag. Why: inside the control
// connection's TLS a small file paid AES-GCM and OpenSSL's copies at both ends (docs/performance.md
// section 21), which a data stream's MAC does at about a third of the cost, and its bytes are no
// more secret than a large file's on a clear data stream. Requests, answers, paths and digests
// stay on the control connection.
//
// The channel joins like any data stream (ATTACH, the server's nonce, the proof under
// K = TLS-Exporter of the control connection with the channel's token as context), and never
// twice. Its keys, one per direction so that no Poly1305 key serves two frames:
//   K_up   = stream_block_key(K, 0, nonce)   client -> server (a put's bytes)
//   K_down = stream_block_key(K, 1, nonce)   server -> client (a get's bytes)
// Each frame's one-time key comes from its direction's key and its sequence on the channel, so a
// frame cannot be replayed, reordered, moved to another request or cut short.
#include "pxfer/engine/layer.hpp"
#include <chrono>
#include <memory>
#include <vector>

#include "checksum/block_mac.hpp"
#include "net/connection.hpp"
#include "wire/wire.hpp"

namespace pxfer::transfer {

struct SmallChannelKeys {
  MacKey up;    // client -> server
  MacKey down;  // server -> client
};
SmallChannelKeys small_channel_keys(const MacKey& channel_key, const AttachNonce& nonce);

class SmallChannel {
 public:
  enum class End { client, server };
  SmallChannel(std::shared_ptr<net::Connection> conn, const SmallChannelKeys& keys, End end);
  ~SmallChannel();  // closes the connection
  SmallChannel(const SmallChannel&) = delete;
  SmallChannel& operator=(const SmallChannel&) = delete;

  // A SMALL_DATA frame of `data` for request `id`, tagged (the tag counts one frame sent).
  wire::SmallData seal(std::uint32_t id, wire::Blob data);
  // The frames in one write.
  net::awaitable<void> send(const std::vector<wire::Message>& frames);
  // The next SMALL_DATA, checked: Error(integrity) when its tag fails (the channel is then
  // unusable: the caller ends the session), Error(protocol) when it is not for request `id`,
  // Error(network) when none came within `deadline` (0: no deadline of its own).
  net::awaitable<wire::Blob> receive(std::uint32_t id, std::chrono::milliseconds deadline = {});
  net::Connection& connection() { return *conn_; }

 private:
  std::shared_ptr<net::Connection> conn_;
  BlockMac send_;
  BlockMac receive_;
};

}  // namespace pxfer::transfer
