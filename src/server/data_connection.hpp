#pragma once
// A connection whose first frame was ATTACH: a data stream joining its transfer (and, once its
// stream ended cleanly, the same client's next ones), or a small-file channel joining its control
// session (transfer/small_channel.hpp).
#include "pxfer/server/layer.hpp"
#include <memory>

#include "control_session.hpp"
#include "net/connection.hpp"
#include "wire/wire.hpp"

namespace pxfer::server {

// True when the connection was handed to a control session (a small-file channel), which then
// closes it; false when the caller closes it.
net::awaitable<bool> serve_data_connection(const SessionContext& cx, std::shared_ptr<net::Connection> conn,
                                           wire::Attach attach);

}  // namespace pxfer::server
