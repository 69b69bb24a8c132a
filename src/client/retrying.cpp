#include "pxfer/client/retrying.hpp"

#include "pxfer/core/limits.hpp"

namespace pxfer {

unsigned run_attempts(const RetryPolicy& policy, const std::function<void(unsigned)>& attempt, ProgressListener* listener,
                      const std::function<void(const Error&)>& failed_attempt) {
  if (policy.retries > limits::max_retries)
    throw Error(Errc::usage, "retries: " + std::to_string(policy.retries) + " asked, at most " +
                                 std::to_string(limits::max_retries) + " (limits::max_retries); ask for fewer");
  return with_retries(policy, attempt, [&](const RetryNotice& n) {
    if (failed_attempt) failed_attempt(n.error);
    if (n.next && listener) listener->on_retry(n.next, n.total, n.delay_seconds, n.error.what());
  });
}

TransferSummary put_retrying(ClientSession& session, const std::string& local, const Url& remote,
                             const ClientOptions& options, ProgressListener* listener) {
  TransferSummary summary;
  run_attempts(options.retry, [&](unsigned n) { summary = session.put(local, remote, options, listener, n); }, listener);
  return summary;
}

TransferSummary get_retrying(ClientSession& session, const Url& remote, const std::string& local,
                             const ClientOptions& options, ProgressListener* listener) {
  TransferSummary summary;
  run_attempts(options.retry, [&](unsigned n) { summary = session.get(remote, local, options, listener, n); }, listener);
  return summary;
}

}  // namespace pxfer
