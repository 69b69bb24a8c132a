#pragma once
// One data stream slot of a client's transfer: connect, ATTACH, move blocks, and reconnect under
// stream_reconnect_policy (pxfer/retry.hpp) when the connection breaks or stalls.
#include <cstdint>
#include <memory>

#include "connect.hpp"
#include "transfer/transfer.hpp"

namespace pxfer {

// Arguments by value: the coroutine outlives its caller's frame (it is spawned detached).
net::awaitable<void> run_data_stream(std::shared_ptr<transfer::Transfer> t, std::uint16_t index, wire::Token token,
                                     std::shared_ptr<const ControlLink> link, ClientOptions opt);

}  // namespace pxfer
