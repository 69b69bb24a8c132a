#pragma once
// The one retry orchestrator of the client (issue 38): every verb that moves a whole file again
// after a failure goes through here: a single put or get (put_file, get_file), each file of a
// batch (skip-existing + move + preserve as one attempt), a third-party copy (tpc/steer.cpp) and
// the gfal2 plugin's copies. It owns the attempt loop (with_retries, pxfer/core/retry.hpp), its
// pauses (Ctrl-C ends one within tens of ms), the listener's on_retry notices and the attempt
// numbers. ClientSession::put/get are single attempts, so nothing retries twice.
// Connection-level reconnects stay inside an attempt: client/kept_link.hpp (a kept control
// connection gone stale) and client/data_stream.cpp (a data stream, under stream_reconnect_policy).
#include "pxfer/client/layer.hpp"
#include <functional>
#include <string>

#include "pxfer/client/client.hpp"

namespace pxfer {

// Runs attempt(1), attempt(2), ... under `policy`: tells `listener` of each retry that follows
// (on_retry) and `failed_attempt` of every attempt that failed, retried or not. Returns the number
// of the attempt that succeeded; the last failure propagates. A policy of more than
// limits::max_retries retries is refused (Errc::usage) before any attempt, whoever made it.
unsigned run_attempts(const RetryPolicy& policy, const std::function<void(unsigned attempt)>& attempt,
                      ProgressListener* listener = nullptr,
                      const std::function<void(const Error&)>& failed_attempt = {});

// One file on `session` under options.retry: each attempt resumes from what the receiver kept;
// the summary says which attempt succeeded.
TransferSummary put_retrying(ClientSession& session, const std::string& local, const Url& remote,
                             const ClientOptions& options, ProgressListener* listener = nullptr);
TransferSummary get_retrying(ClientSession& session, const Url& remote, const std::string& local,
                             const ClientOptions& options, ProgressListener* listener = nullptr);

}  // namespace pxfer
