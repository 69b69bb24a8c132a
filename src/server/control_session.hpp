#pragma once
// A connection after TLS detection: its first frame says what it is. HELLO opens a control
// session (version check, AUTH, then requests until the client leaves or idles out); ATTACH hands
// a data stream to the transfer service. Each request type has one handler that authorizes and
// answers it; the session dispatches with one std::visit.
#include "pxfer/server/layer.hpp"
#include <atomic>
#include <memory>

#include "admission.hpp"
#include "authenticator.hpp"
#include "blocking_pool.hpp"
#include "metrics.hpp"
#include "net/connection.hpp"
#include "io/file_io.hpp"
#include "pxfer/server/server.hpp"
#include "tpc_service.hpp"
#include "transfer_service.hpp"

namespace pxfer::server {

// What sessions share; owned by the server, outliving every session.
struct SessionContext {
  const ServerOptions& options;
  const Directory& root;
  const Authenticator& auth;
  TransferService& transfers;
  Admission& admission;
  Metrics& metrics;
  const std::atomic<bool>& stopping;
  BlockingPool& blocking;       // SUM and LIST run here, off the network threads
  IdentityGate& slow_requests;  // at most so many of them per identity at once
  TpcService& tpc;              // third-party copy: grants (passive end) and copies (active end)
};

net::awaitable<void> serve_connection(const SessionContext& cx, std::shared_ptr<net::Connection> conn);

}  // namespace pxfer::server
