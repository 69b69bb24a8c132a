#pragma once
// Third-party copy: one file from one pxferd to another, the data moving directly between the two
// servers while this client only steers and reports (docs/protocol.md "Third-party copy"). The
// client logs in to both; the passive server hands it a one-time, path-scoped grant that the
// active server presents instead of a credential. Pull (as gfal-copy --copy-mode pull): the
// destination connects to the source and reads; push: the source connects to the destination and
// writes. Throws pxfer::Error with a one-line message on failure.
#include "pxfer/tpc/layer.hpp"
#include <atomic>

#include "pxfer/client/client.hpp"
#include "pxfer/engine/peer_copy.hpp"

namespace pxfer {

enum class CopyMode { pull, push };

// Progress arrives from the server doing the copy each options.perf_interval; options.retry
// retries a failed attempt with a new grant, resuming from what the destination kept. `security`:
// credentials and trust for both servers (nullptr = the process's, set_client_security).
// `timeout` > 0 bounds the whole copy (gfal2's transfer timeout): past it the copy fails with
// Errc::network ("timed out") and the client leaves, which makes the active server abort it.
// `dest_security`: the destination's own credentials when they differ from the source's (gfal2's
// per-URL credentials); nullptr = `security` serves both. A credential only ever reaches the
// server it is given for. `cancel` (set from any thread, e.g. gfal2_cancel's callback): within
// 50 ms the client closes both control connections (the active server then aborts its copy, and
// the passive one its side) and the copy fails with Errc::interrupted, not retried.
TransferSummary copy_between_servers(const Url& source, const Url& dest, const ClientOptions& options, CopyMode mode,
                                     ProgressListener* listener = nullptr, const ClientSecurity* security = nullptr,
                                     std::chrono::milliseconds timeout = std::chrono::milliseconds(0),
                                     const ClientSecurity* dest_security = nullptr,
                                     const std::atomic<bool>* cancel = nullptr);

// The active end's client for a pxferd (pxfer/engine/peer_copy.hpp): each copy is a ClientSession of its
// own with the request's options and credentials, the same session `pxfer put` and `get` use.
PeerCopier client_peer_copier();

}  // namespace pxfer
