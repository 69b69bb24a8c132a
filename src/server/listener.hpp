#pragma once
// pxferd's listening port: bind, the accept loop with its connection quotas (in total and per
// source address), and TLS detection on each accepted socket (a TLS handshake record, or a clear
// pxfer frame for a data stream). Hands each connection, TLS done, to `serve`. Keeps every open
// connection so that a stop can close them. A connection that has not logged in yet
// (Connection::logged_in) is the first to go when room is needed: at a quota, or past
// limits::max_connections_logging_in, the oldest such connection is closed so that the new one
// can come in (issue 34: idle connections from a few addresses locked every client out).
#include "pxfer/server/layer.hpp"
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "net/connection.hpp"
#include "metrics.hpp"
#include "net/tls.hpp"
#include "pxfer/core/rate_meter.hpp"
#include "pxfer/server/server.hpp"

namespace pxfer::server {

class Listener {
 public:
  using Serve = std::function<net::awaitable<void>(std::shared_ptr<net::Connection>)>;

  // Binds options.listen (throws Error(usage) for a bad address, Error(network) when taken).
  Listener(boost::asio::io_context& ioc, const ServerOptions& options, const std::atomic<bool>& stopping, Metrics& metrics);
  boost::asio::ip::tcp::endpoint local_endpoint() const { return acceptor_.local_endpoint(); }

  net::awaitable<void> accept_loop(net::TlsContextPtr tls, Serve serve);
  // A new certificate (SIGHUP): connections accepted from now on handshake with `tls`.
  void set_tls(net::TlsContextPtr tls);
  unsigned connections();  // open now (counted at accept)
  // Stops accepting and closes every connection (from the io_context's threads: post it).
  void close_all();

 private:
  struct Slot;  // one counted connection
  struct Counts {
    std::mutex mutex;
    unsigned total = 0;
    std::list<std::shared_ptr<Slot>> logging_in;  // accept order; may still hold some that logged in since
    std::unordered_map<std::string, unsigned> per_address;
    std::unordered_map<std::string, Clock::time_point> refusal_logged;  // once a minute per address
  };
  class Counted;
  std::string admit(const std::shared_ptr<Slot>& slot);
  void log_refusal(const std::string& address, const std::string& why);
  bool shed_oldest(const std::string* address, std::vector<std::shared_ptr<net::Connection>>& closing);
  void track(const std::shared_ptr<net::Connection>& conn);
  net::awaitable<void> serve_socket(Counted counted, std::shared_ptr<net::Connection> plain, net::TlsContextPtr tls,
                                    Serve serve);

  boost::asio::io_context& ioc_;
  const ServerOptions& options_;
  const std::atomic<bool>& stopping_;
  Metrics& metrics_;
  boost::asio::ip::tcp::acceptor acceptor_;
  Counts counts_;
  net::TlsContextPtr current_tls();
  std::mutex tls_mutex_;
  net::TlsContextPtr tls_;
  std::mutex connections_mutex_;
  std::vector<std::weak_ptr<net::Connection>> connections_;
};

}  // namespace pxfer::server
