#pragma once
// The active end of a third-party copy: a pxferd that pulls from or pushes to another server runs
// a client of it. The server layer sits beside the client, not above it (docs/architecture.md),
// so it only knows this interface; whoever starts the server hands it the client's implementation
// (pxfer/tpc/tpc.hpp: client_peer_copier(), which pxferd passes to Server).
#include "pxfer/engine/layer.hpp"
#include <functional>
#include <memory>
#include <string>

#include "pxfer/core/client_options.hpp"
#include "pxfer/engine/transfer_events.hpp"
#include "pxfer/common/url.hpp"

namespace pxfer {

class ProgressListener;

struct PeerCopyRequest {
  ClientOptions options;     // streams, block size, checksum... from the steering client's TPC_START
  ClientSecurity security;   // the peer's fingerprint and the one-time grant: nothing else
  Url target;                // the peer's file, its host already resolved and allowed
  std::string local;         // this server's file (a push reads /proc/self/fd/N)
  bool push = false;
};

// One copy. run() blocks its caller (a thread of the server's own); abort() may come from
// another thread at any time, before or during run().
class PeerCopy {
 public:
  virtual ~PeerCopy() = default;
  virtual TransferSummary run(ProgressListener& listener) = 0;
  virtual void abort() = 0;
  // Whether the peer proved to be the server the fingerprint names (what a failure may tell).
  virtual bool verified() const = 0;
};

using PeerCopier = std::function<std::unique_ptr<PeerCopy>(const PeerCopyRequest&)>;

}  // namespace pxfer
