// The client that runs the active end of a third-party copy inside pxferd (pxfer/engine/peer_copy.hpp):
// the tpc layer sits above both the client and the server, and this is where they meet.
#include "pxfer/engine/peer_copy.hpp"
#include "pxfer/tpc/tpc.hpp"

namespace pxfer {
namespace {

class SessionCopy : public PeerCopy {
 public:
  explicit SessionCopy(const PeerCopyRequest& request) : request_(request), session_(request.options, request.security) {}
  // One attempt (ClientSession::put/get never retry): the steering client retries, with a new
  // grant each time (tpc/steer.cpp).
  TransferSummary run(ProgressListener& listener) override {
    return request_.push ? session_.put(request_.local, request_.target, request_.options, &listener)
                         : session_.get(request_.target, request_.local, request_.options, &listener);
  }
  void abort() override { session_.abort(); }
  bool verified() const override { return session_.verified(request_.target); }

 private:
  PeerCopyRequest request_;
  ClientSession session_;
};

}  // namespace

PeerCopier client_peer_copier() {
  return [](const PeerCopyRequest& request) -> std::unique_ptr<PeerCopy> { return std::make_unique<SessionCopy>(request); };
}

}  // namespace pxfer
