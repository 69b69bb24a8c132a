#pragma once
// One retry policy for the whole client. Which failures another attempt may cure is one table
// (retryable, keeps_partial), read by the transfer retries of one file and of a batch, by the
// data-stream reconnects, by the stale-control-connection retry and by the receiver's decision to
// keep a partial file; how long to wait between attempts is one RetryPolicy. Pure: no I/O.
#include "pxfer/core/layer.hpp"
#include <chrono>
#include <functional>
#include <optional>

#include "pxfer/common/error.hpp"

namespace pxfer {

// What is tried again.
enum class RetryScope {
  transfer,    // a whole transfer (one file), resuming from what the receiver kept
  connection,  // one connection (a data stream, a kept control connection) replaced by a new one
};

// Whether another attempt at `scope` may succeed after a failure of class `code`. Never for bad
// input, a refusal, a missing file, an existing destination, a local error such as a full disk,
// or an interruption by the user.
bool retryable(Errc code, RetryScope scope) noexcept;

// Whether a receiver keeps its partial file and resume journal after a failure of class `code`:
// the failures a rerun (or a retry) can pick up from, an interruption included.
bool keeps_partial(Errc code) noexcept;

struct RetryPolicy {
  unsigned retries = 0;                         // further attempts after the first
  std::chrono::milliseconds first_delay{1000};  // before the first retry; doubled for each next one
  std::chrono::milliseconds max_delay{60000};   // no pause is longer
  // Each pause is drawn from [1 - jitter, 1 + jitter) of its nominal value, so that many clients
  // cut off together do not all come back at the same instant.
  double jitter = 0.5;

  // The pause before attempt `next` (2 for the first retry), given `unit` drawn uniformly from [0, 1).
  std::chrono::milliseconds delay_before(unsigned next, double unit) const noexcept;
};

// A data stream that broke is replaced after 250 ms, 500 ms, ... up to 8 s, at most five times in a
// row (the count starts again once a replacement has moved data); the transfer's other streams
// carry its blocks meanwhile, so there is nothing to spread out: no jitter.
inline constexpr RetryPolicy stream_reconnect_policy{5, std::chrono::milliseconds(250), std::chrono::seconds(8), 0.0};

// The count and the pauses of one retry loop, apart from the loop: the blocking loop of
// with_retries and a data stream's coroutine loop (client/data_stream.cpp) both ask it, so the
// limit and the pauses are decided in one place for every loop.
class RetryCount {
 public:
  RetryCount(const RetryPolicy& policy, RetryScope scope) noexcept : policy_(policy), scope_(scope) {}
  // Counts a failure of class `code`; the pause before the next attempt (`unit` as delay_before's),
  // or nothing when none follows: the class is not retryable at this scope or the retries are spent.
  std::optional<std::chrono::milliseconds> after_failure(Errc code, double unit) noexcept;
  // An attempt got somewhere (a replaced data stream moved data): the count starts again.
  void reset() noexcept { failed_ = 0; }
  unsigned failed() const noexcept { return failed_; }  // failures in a row since the last reset

 private:
  RetryPolicy policy_;
  RetryScope scope_;
  unsigned failed_ = 0;
};

// Told of each failed attempt; `next` is 0 when no attempt follows.
struct RetryNotice {
  const Error& error;
  unsigned attempt;         // the attempt that failed, from 1
  unsigned total;           // 1 + policy.retries
  unsigned next;            // the attempt that follows, or 0
  double delay_seconds;     // before it
};

// Runs attempt(1), attempt(2), ... until one returns, one fails with a class that is not
// retryable(transfer), or the retries are spent; then that Error propagates. Returns the number
// of the attempt that succeeded. Any other exception is an internal error. A pause ends early on
// Ctrl-C or SIGTERM (interrupted). Called from one place only, the client's orchestrator
// (pxfer/client/retrying.hpp), which every verb goes through.
unsigned with_retries(const RetryPolicy& policy, const std::function<void(unsigned attempt)>& attempt,
                      const std::function<void(const RetryNotice&)>& on_failure = {});

}  // namespace pxfer
