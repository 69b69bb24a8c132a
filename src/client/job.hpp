#pragma once
// One file transfer on the client, one attempt: preflight, OPEN on the session's control
// connection, the engine with its data streams, the summary. ClientSession (session.cpp) runs
// jobs one at a time; only the orchestrator (retrying.cpp) retries a whole transfer.
#include "pxfer/client/layer.hpp"
#include <boost/asio/io_context.hpp>
#include <optional>
#include <string>

#include "connect.hpp"
#include "pxfer/client/client.hpp"
#include "plan/negotiate.hpp"

namespace pxfer {

struct Job {
  Direction direction;
  std::string local;  // after "into this directory" expansion
  Url remote;         // likewise
  ClientOptions options;
  ProgressListener* listener;
  TransferSummary summary;
};

// One attempt of `job` on `link`: the session's control connection to the same server when it has
// one (reused), else a new one that the session keeps. `link_clean` says whether the control
// connection is fit for another transfer afterwards: yes after a success or a refused OPEN, no
// after anything that failed midway.
net::awaitable<void> run_job(boost::asio::io_context& ioc, Job& job, std::optional<ControlLink>& link, bool& link_clean,
                             std::shared_ptr<ClientTrust> trust);

// The session's control connection to `remote`'s server: the kept one, or a new one. Returns
// whether it was kept (and so may turn out to be closed by the server meanwhile).
net::awaitable<bool> control_to(std::optional<ControlLink>& link, const Url& remote, std::chrono::milliseconds connect_timeout,
                                std::shared_ptr<ClientTrust> trust);

// The transfer's id (OPEN's, PUT_SMALL's): the same for every retry of one file and for a rerun of
// the same command on this host (the source's size and mtime included).
wire::Token transfer_id_of(Direction direction, const std::string& local, const Url& remote,
                           const std::optional<transfer::SourceFacts>& facts);

// A request that is not a transfer (SUM, SET_ATTRIBUTES, ...) and its answer, on the session's
// control connection to `remote`'s server (opened if needed).
net::awaitable<void> run_request(std::optional<ControlLink>& link, const Url& remote, std::chrono::milliseconds connect_timeout,
                                 const wire::Message& request, wire::Message& reply, std::shared_ptr<ClientTrust> trust);

}  // namespace pxfer
