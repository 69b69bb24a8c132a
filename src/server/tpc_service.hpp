#pragma once
// Third-party copy on pxferd (docs/protocol.md "Third-party copy"). As the PASSIVE end it hands a
// steering client a one-time grant (TPC_GRANT_REQUEST, tpc_grants.hpp) that the other server
// then presents as its AUTH token. As the ACTIVE end (TPC_START) it is an ordinary pxfer client
// of the other server, through the same ClientSession that `pxfer put` and `pxfer get` use (one
// engine: N streams, block checksums, resume, stall detection), and reports its progress to the
// steering client. It connects only to peers the operator allows (ServerOptions::tpc_allow).
#include "pxfer/server/layer.hpp"
#include <memory>
#include <mutex>
#include <vector>

#include "admission.hpp"
#include "authenticator.hpp"
#include "io/file_io.hpp"
#include "net/connection.hpp"
#include "pxfer/engine/peer_copy.hpp"
#include "pxfer/server/server.hpp"
#include "wire/wire.hpp"
#include "tpc_grants.hpp"
#include "tpc_peers.hpp"

namespace pxfer::server {

class TpcService {
 public:
  // A copy this server makes is a transfer like a put or a get: it waits in `admission`'s line
  // (--max-active, --max-streams-per-client) and ends with the same accounting line.
  // `copier` runs the active end's client (pxfer/engine/peer_copy.hpp); empty: TPC_START is refused.
  TpcService(const ServerOptions& options, const Directory& root, std::shared_ptr<Admission> admission,
             PeerCopier copier);
  // Aborts the copies still running (the server is going away) and waits, at most 10 s, for
  // their threads to let go of their sessions.
  ~TpcService();
  GrantBook& grants() { return grants_; }
  // The steering identity's access was checked by the caller (read or write of m.path).
  net::awaitable<void> grant(net::Connection& control, const SessionRights& rights, const wire::TpcGrantRequest& m);
  // The steering identity's access to m.local_path was checked by the caller. Sends TPC_PROGRESS
  // frames while the copy runs, then TPC_DONE or ERROR.
  // `agent` is the steering client's, from its HELLO (for the accounting line); `caps` the
  // capabilities both ends confirmed (TPC_DONE's second tail: cap_tpc_end_counts).
  net::awaitable<void> start(net::Connection& control, const SessionRights& rights, const std::string& agent,
                             const wire::TpcStart& m, std::uint64_t caps);

 private:
  // The URL to connect to: the peer's host replaced by the first address it resolves to that
  // the policy allows (so a second lookup cannot lead elsewhere). Throws Error(permission).
  // `self` is where the steering client reached this server: a peer at that very address and port
  // is this server itself (a copy within one server), allowed without --tpc-allow.
  net::awaitable<Url> allowed_peer(const Url& peer, const net::tcp::endpoint& self);

  // Waits for an admission slot; `streams` becomes what it grants. While queued the steering
  // client hears TPC_PROGRESS with nothing moved, about once a second.
  net::awaitable<std::unique_ptr<Admission::Slot>> admit(net::Connection& control, const std::string& path,
                                                         std::uint16_t& streams, std::uint64_t total);

  struct Copies;  // the copies running as the active end (tpc_service.cpp)
  std::shared_ptr<Copies> copies_;
  const ServerOptions& options_;
  std::shared_ptr<Admission> admission_;
  const Directory& root_;  // a push reads its file through it, confined like every server read
  GrantBook grants_;
  PeerPolicy peers_;
  PeerCopier copier_;
};

}  // namespace pxfer::server
