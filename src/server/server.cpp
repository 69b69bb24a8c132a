// pxferd's wiring: the export root, the server's TLS identity, authentication, admission, the
// transfer service and the listener, on one io_context; run, stop and reload.
#include "pxfer/server/server.hpp"

#include <spdlog/spdlog.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <thread>

#include "admission.hpp"
#include "authenticator.hpp"
#include "blocking_pool.hpp"
#include "control_session.hpp"
#include "identity.hpp"
#include "listener.hpp"
#include "metrics.hpp"
#include "net/tls.hpp"
#include "pxfer/core/clock.hpp"
#include "pxfer/common/error.hpp"
#include "pxfer/core/limits.hpp"
#include "io/file_io.hpp"
#include "io/resume_journal.hpp"
#include "transfer_service.hpp"

namespace pxfer {

namespace asio = boost::asio;

namespace {
net::ServerTlsConfig server_tls_config(const server::ServerIdentity& identity, const ServerOptions& o) {
  return net::ServerTlsConfig{identity.cert_file, identity.key_file, o.client_ca_file, o.x509 ? o.x509_ca_dir : ""};
}
}  // namespace

struct Server::Impl {
  Impl(ServerOptions opt, PeerCopier copier)
      : options(std::move(opt)),
        root(Directory::open_root(options.root, true)),
        auth(options),
        admission(std::make_shared<server::Admission>(server::AdmissionLimits{
            options.max_active, options.max_streams_per_client, options.max_clients, options.max_starts_per_second})),
        blocking(std::max(1u, options.blocking_threads)),
        slow_requests(std::max(1u, options.max_slow_requests_per_identity)),
        opening(std::max(1u, options.open_threads)),
        transfers(options, root, admission, metrics, opening),
        tpc(options, root, admission, std::move(copier)),
        identity(server::load_or_create_identity(options.cert_file, options.key_file, options.state_dir)),
        tls(net::make_server_tls(server_tls_config(identity, options))) {
    // Refuse to serve without client authentication before the port is bound.
    auth.check_policy(options.listen.host.empty() ? "::" : options.listen.host);
    listener.emplace(ioc, options, stopping, metrics);
    metrics.per_identity = options.metrics_per_identity;
  }

  // Temporary files that crashed receivers left anywhere below the export root go once older
  // than --partial-max-age: at start, then every half of that age (at least a second apart, at
  // most an hour). Its own thread: a big tree must not hold up a network thread.
  void sweep_temporaries() {
    const std::int64_t age = options.partial_max_age.count();
    const auto every = std::clamp<std::chrono::seconds>(options.partial_max_age / 2, std::chrono::seconds(1), std::chrono::hours(1));
    std::unique_lock lock(sweep_mutex);
    while (!sweep_stop) {
      lock.unlock();
      std::size_t removed = sweep_tree(root.fd(), age, sweep_stop);
      if (removed > 0) spdlog::info("removed {} stale temporary file(s) of interrupted transfers", removed);
      lock.lock();
      sweep_wake.wait_for(lock, every, [this] { return sweep_stop.load(); });
    }
  }

  void stop() {
    transfers.stop_pacing_at(Clock::now());  // first, here: every network thread may sit in a paced write
    if (stopping.exchange(true)) return;
    asio::post(ioc, [this] {
      boost::system::error_code ignored;
      signals.cancel(ignored);
      transfers.abort_all(Error(Errc::network, "the server is shutting down and aborted this transfer; "
                                               "retry later (the same command resumes it)"));
      asio::co_spawn(ioc, close_after_errors(), asio::detached);
    });
  }

  // The aborted transfers send their clients an ERROR that says why; closing every connection at
  // once would cut it off and leave them with "closed by the peer". So the connections close once
  // those transfers ended, or after limits::stop_error_grace.
  asio::awaitable<void> close_after_errors() {
    asio::steady_timer timer(ioc);
    const auto deadline = Clock::now() + limits::stop_error_grace;
    while (transfers.in_service() > 0 && Clock::now() < deadline) {
      timer.expires_after(std::chrono::milliseconds(20));
      auto [ec] = co_await timer.async_wait(asio::as_tuple(asio::use_awaitable));
      (void)ec;
    }
    listener->close_all();
  }

  // Polls the transfers still in service every 100 ms (a drain is rare and short: no need for a
  // notification path through every transfer's end) and stops once none is, or at the deadline.
  asio::awaitable<void> drain_then_stop(Clock::time_point deadline) {
    asio::steady_timer timer(ioc);
    // Those still running before the deadline: a paced write gives up at it (stop_pacing_at), so
    // at the deadline they may be ending already, aborted by it all the same.
    std::size_t running = transfers.in_service();
    while (!stopping && running > 0 && Clock::now() < deadline) {
      timer.expires_after(std::chrono::milliseconds(100));
      auto [ec] = co_await timer.async_wait(asio::as_tuple(asio::use_awaitable));
      (void)ec;
      if (Clock::now() < deadline) running = transfers.in_service();
    }
    if (stopping) co_return;
    if (running > 0)
      spdlog::warn("drain timeout ({} s) reached: aborting {} transfer(s); partial puts stay hidden for a resume",
                   std::chrono::duration_cast<std::chrono::seconds>(options.drain_timeout).count(), running);
    else
      spdlog::info("drained: no transfer left running");
    stop();
  }

  void drain() {
    if (stopping || options.drain_timeout.count() == 0 || draining.exchange(true)) {
      stop();
      return;
    }
    transfers.refuse_new();
    transfers.stop_pacing_at(Clock::now() + options.drain_timeout);
    spdlog::info("draining: new transfers are refused; the {} running may finish within {} s (a second SIGTERM aborts them)",
                 transfers.in_service(), std::chrono::duration_cast<std::chrono::seconds>(options.drain_timeout).count());
    asio::co_spawn(ioc, drain_then_stop(Clock::now() + options.drain_timeout), asio::detached);
  }

  ServerOptions options;
  Directory root;
  server::Authenticator auth;
  std::shared_ptr<server::Admission> admission;
  server::Metrics metrics;  // --metrics-listen (metrics.hpp)
  server::BlockingPool blocking;     // outlives the sessions and transfers that wait on it
  server::IdentityGate slow_requests;
  server::BlockingPool opening;      // a transfer's file open, apart from SUM and LIST
  server::TransferService transfers;
  server::TpcService tpc;
  server::ServerIdentity identity;
  net::TlsContextPtr tls;
  std::atomic<bool> stopping{false};
  std::atomic<bool> draining{false};
  asio::io_context ioc;
  std::optional<server::Listener> listener;
  asio::signal_set signals{ioc};
  std::mutex sweep_mutex;
  std::condition_variable sweep_wake;
  std::atomic<bool> sweep_stop{false};
  const server::SessionContext sessions{options, root, auth, transfers, *admission, metrics, stopping, blocking,
                                        slow_requests, tpc};
};

Server::Server(ServerOptions options, PeerCopier copier)
    : impl_(std::make_unique<Impl>(std::move(options), std::move(copier))) {}

Server::~Server() = default;

std::uint16_t Server::port() const { return impl_->listener->local_endpoint().port(); }

std::string Server::fingerprint() const { return impl_->identity.fingerprint; }

bool Server::created_identity() const { return impl_->identity.created; }

std::string Server::certificate_file() const { return impl_->identity.cert_file; }

std::string Server::listen_address() const { return net::endpoint_text(impl_->listener->local_endpoint()); }

void Server::run() {
  Impl& s = *impl_;
  if (s.options.handle_signals) {
    s.signals.add(SIGINT);
    s.signals.add(SIGTERM);
    s.signals.async_wait([this](const boost::system::error_code& ec, int signo) {
      if (ec) return;
      spdlog::info("signal {} received: stopping, transfers in progress are aborted", signo);
      impl_->stop();
    });
  }
  server::Listener::Serve serve = [&s](std::shared_ptr<net::Connection> conn) { return server::serve_connection(s.sessions, conn); };
  asio::co_spawn(s.ioc, s.listener->accept_loop(s.tls, serve), asio::detached);
  unsigned threads = s.options.threads ? s.options.threads : std::max(1u, std::thread::hardware_concurrency());
  std::vector<std::thread> workers;
  for (unsigned i = 1; i < threads; ++i) workers.emplace_back([&s] { s.ioc.run(); });
  std::thread sweeper([&s] { s.sweep_temporaries(); });
  // Once stop() ran and every connection closed, the loops run dry and run() returns.
  s.ioc.run();
  for (auto& w : workers) w.join();
  {
    std::lock_guard lock(s.sweep_mutex);
    s.sweep_stop = true;
  }
  s.sweep_wake.notify_all();
  sweeper.join();
}

void Server::stop() { impl_->stop(); }

void Server::drain() { impl_->drain(); }

std::string Server::metrics_text() const {
  impl_->metrics.credit_running();  // the running transfers' bytes into pxferd_bytes_total
  auto load = impl_->admission->load();
  auto running = impl_->transfers.running();
  server::Gauges gauges{load.active,      load.queued,   load.max_active,  load.clients, impl_->listener->connections(),
                        running.transfers, running.bytes, running.streams, running.draining};
  return server::format_prometheus(impl_->metrics, gauges);
}

void Server::reload(const ServerOptions& next) {
  Impl& s = *impl_;
  // The certificate and key are read again too (a renewed certificate takes no restart), and the
  // --x509-ca-dir into a new store: CA files and CRLs added or renewed there count from now on.
  // All is checked before anything changes, so a bad file leaves the old settings in force.
  net::TlsContextPtr tls =
      net::make_server_tls(server_tls_config(s.identity, s.options));
  const std::string fingerprint = net::certificate_fingerprint_file(s.identity.cert_file);
  s.auth.reload(next);
  s.listener->set_tls(tls);
  if (fingerprint != s.identity.fingerprint)
    spdlog::info("reload: new certificate {} for the connections from now on", fingerprint);
}

}  // namespace pxfer
