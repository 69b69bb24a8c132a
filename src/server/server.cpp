// pxferd's wiring: the export root, the server's TLS identity, authentication, admission, the
// transfer service and the listener, on one io_context; run, stop and reload.
#include "pxfer/server.hpp"

#include <spdlog/spdlog.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/signal_set.hpp>
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
#include "pxfer/error.hpp"
#include "pxfer/file_io.hpp"
#include "transfer_service.hpp"

namespace pxfer {

namespace asio = boost::asio;

struct Server::Impl {
  explicit Impl(ServerOptions opt)
      : options(std::move(opt)),
        root(Directory::open_root(options.root, true)),
        auth(options),
        admission(std::make_shared<server::Admission>(server::AdmissionLimits{
            options.max_active, options.max_streams_per_client, options.max_clients, options.max_starts_per_second})),
        blocking(std::max(1u, options.blocking_threads)),
        slow_requests(std::max(1u, options.max_slow_requests_per_identity)),
        opening(std::max(1u, options.open_threads)),
        transfers(options, root, admission, metrics, opening),
        identity(server::load_or_create_identity(options.cert_file, options.key_file, options.state_dir)),
        tls(net::make_server_tls(net::ServerTlsConfig{identity.cert_file, identity.key_file, options.client_ca_file})) {
    // Refuse to serve without client authentication before the port is bound.
    auth.check_policy(options.listen.host.empty() ? "::" : options.listen.host);
    listener.emplace(ioc, options, stopping, metrics);
  }

  void stop() {
    if (stopping.exchange(true)) return;
    asio::post(ioc, [this] {
      boost::system::error_code ignored;
      signals.cancel(ignored);
      transfers.abort_all(Error(Errc::network, "the server is shutting down; retry later"));
      listener->close_all();
    });
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
  server::ServerIdentity identity;
  net::TlsContextPtr tls;
  std::atomic<bool> stopping{false};
  asio::io_context ioc;
  std::optional<server::Listener> listener;
  asio::signal_set signals{ioc};
  const server::SessionContext sessions{options, root, auth, transfers, *admission, metrics, stopping, blocking,
                                        slow_requests};
};

Server::Server(ServerOptions options) : impl_(std::make_unique<Impl>(std::move(options))) {}

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
      stop();
    });
  }
  server::Listener::Serve serve = [&s](std::shared_ptr<net::Connection> conn) { return server::serve_connection(s.sessions, conn); };
  asio::co_spawn(s.ioc, s.listener->accept_loop(s.tls, serve), asio::detached);
  unsigned threads = s.options.threads ? s.options.threads : std::max(1u, std::thread::hardware_concurrency());
  std::vector<std::thread> workers;
  for (unsigned i = 1; i < threads; ++i) workers.emplace_back([&s] { s.ioc.run(); });
  // Once stop() ran and every connection closed, the loops run dry and run() returns.
  s.ioc.run();
  for (auto& w : workers) w.join();
}

void Server::stop() { impl_->stop(); }

std::string Server::metrics_text() const {
  auto load = impl_->admission->load();
  server::Gauges gauges{load.active, load.queued, load.max_active, load.clients, impl_->listener->connections()};
  return server::format_prometheus(impl_->metrics, gauges);
}

void Server::reload(const std::string& tokens_file, const std::string& access_file) {
  impl_->auth.reload(tokens_file, access_file);
}

}  // namespace pxfer
