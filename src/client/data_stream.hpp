#pragma once
// One data stream slot of a client's transfer: connect, ATTACH, move blocks, and reconnect under
// stream_reconnect_policy (pxfer/core/retry.hpp) when the connection breaks or stalls. `reused`, a
// connection the session kept from an earlier file (client/stream_pool.hpp), is tried first; the
// coroutine must run on that connection's executor.
#include "pxfer/client/layer.hpp"
#include <cstdint>
#include <memory>

#include "connect.hpp"
#include "engine/transfer.hpp"

namespace pxfer {

// What the client's data connections are made as: a kept one of another kind is not used.
StreamPool::Kind kind_of(const ClientOptions& opt);

// Arguments by value: the coroutine outlives its caller's frame (it is spawned detached).
net::awaitable<void> run_data_stream(std::shared_ptr<transfer::Transfer> t, std::uint16_t index, wire::Token token,
                                     std::shared_ptr<const ControlLink> link, ClientOptions opt,
                                     std::shared_ptr<net::Connection> reused = nullptr);

}  // namespace pxfer
