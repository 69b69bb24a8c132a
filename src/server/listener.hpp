#pragma once
// pxferd's listening port: bind, the accept loop with its connection quotas (in total and per
// source address), and TLS detection on each accepted socket (a TLS handshake record, or a clear
// pxfer frame for a data stream). Hands each connection, TLS done, to `serve`. Keeps every open
// connection so that a stop can close them.
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "net/connection.hpp"
#include "metrics.hpp"
#include "net/tls.hpp"
#include "pxfer/rate_meter.hpp"
#include "pxfer/server.hpp"

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
  struct Counts {
    std::mutex mutex;
    unsigned total = 0;
    std::unordered_map<std::string, unsigned> per_address;
    std::unordered_map<std::string, Clock::time_point> refusal_logged;  // once a minute per address
  };
  class Counted;
  std::string admit(const std::string& address);
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
