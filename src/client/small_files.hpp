#pragma once
// Small files pipelined on a session's control connection (PUT_SMALL / GET_SMALL): the coroutine
// behind ClientSession::move_small.
#include "pxfer/client/layer.hpp"
#include <memory>
#include <optional>
#include <vector>

#include "connect.hpp"
#include "pxfer/client/client.hpp"

namespace pxfer {

// Moves `files` (all to or from `files.front().remote`'s server) on `link`, opening it when it is
// not to that server. Every file is reported to `done` exactly once; a failure of the connection
// itself fails every file not yet answered and drops `link`. Never throws.
net::awaitable<void> run_small_files(std::optional<ControlLink>& link, const std::vector<SmallFile>& files,
                                     const ClientOptions& options, std::shared_ptr<ClientTrust> trust, const SmallDone& done);

}  // namespace pxfer
