#pragma once
// Connection set-up on the client, shared by transfers, doctor, sweep and the namespace requests:
// sockets (the window pinned before the SYN), the trust a session uses (CA, pin or known hosts,
// credentials), control connections (resolve, connect, TLS, verify, HELLO, AUTH) and data
// connections. And the io_context runner every client entry point uses.
#include "pxfer/client/layer.hpp"
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "net/connection.hpp"
#include "net/tls.hpp"
#include "pxfer/client/client.hpp"
#include "pxfer/io/socket_tuning.hpp"
#include "pxfer/common/url.hpp"
#include "stream_pool.hpp"
#include "engine/small_channel.hpp"
#include "wire/wire.hpp"

namespace pxfer {

// Credentials and the servers a session trusts; one object per session (ClientSession takes the
// process's at construction), so a later set_client_security never changes a running session.
class ClientTrust {
 public:
  explicit ClientTrust(ClientSecurity settings) : settings_(std::move(settings)) {}
  const ClientSecurity& settings() const { return settings_; }
  net::TlsContextPtr tls_context();  // built on first use
  // The server is who we expect: the chain (checked in the handshake with --ca), the explicit
  // --fingerprint, or the known-hosts pin (trust on first use). Before any credential is sent.
  void verify_server(const net::Connection& conn, const std::string& authority);
  // What verify_server accepted for `authority`: data streams must meet the same certificate.
  std::string verified_fingerprint(const std::string& authority) const;

 private:
  const ClientSecurity settings_;
  mutable std::mutex mutex_;
  net::TlsContextPtr tls_;
  std::map<std::string, std::string> verified_;  // authority -> fingerprint
};

// The trust set_client_security installed (a snapshot).
std::shared_ptr<ClientTrust> current_trust();

struct ControlLink {
  std::shared_ptr<net::Connection> connection;
  net::tcp::resolver::results_type data_endpoints;  // where the data streams connect
  std::string authority;                            // "host:port" for messages
  std::string host;                                 // as the user named it (TLS host-name checks)
  std::shared_ptr<ClientTrust> trust;
  wire::HelloOk hello;
  wire::AuthOk auth;  // who the server says we are
  // Data connections between files, shared by every copy of this link (a transfer's streams hold
  // one); they close with the last copy.
  std::shared_ptr<StreamPool> idle_streams = std::make_shared<StreamPool>();
  // The small files' data connection (cap_small_channel, client/small_files.cpp), once opened.
  std::shared_ptr<transfer::SmallChannel> small_channel;
};

// Opens a socket to the first endpoint that answers within `timeout`; `grant` (if given) gets the
// buffers the kernel granted. Throws Error(network) naming `authority`.
net::awaitable<net::tcp::socket> connect_socket(boost::asio::any_io_executor ex,
                                                const net::tcp::resolver::results_type& endpoints,
                                                const SocketTuning& tuning, std::chrono::milliseconds timeout,
                                                const std::string& authority, BufferGrant* grant);

net::awaitable<ControlLink> open_control(const Url& remote, std::chrono::milliseconds connect_timeout,
                                         std::shared_ptr<ClientTrust> trust);
// The same with the process's trust (doctor, sweep, namespace requests). Not a coroutine: the
// trust is made here, never as a temporary inside the caller's co_await (g++ 12 mishandles those).
net::awaitable<ControlLink> open_control(const Url& remote, std::chrono::milliseconds connect_timeout);

// A data stream's connection over a connected socket: clear TCP, or with `encrypt` TLS 1.3 to
// the same certificate the control connection verified. Arguments by reference (g++ 12).
net::awaitable<std::shared_ptr<net::Connection>> open_data_connection(net::tcp::socket& socket, const bool& encrypt,
                                                                      const ControlLink& link);

// "control TLS1.3 (...), data clear" for a summary.
// `tls_bound`: both ends offered cap_tls_bound_streams, so encrypted blocks carry no Poly1305.
std::string describe_protection(const net::Connection& control, bool encrypt, bool tls_bound);
// The same for a small file (PUT_SMALL / GET_SMALL): inside the control connection's TLS, or
// on the small-file channel (`channel`, transfer/small_channel.hpp).
std::string describe_small_protection(const net::Connection& control, bool channel);

// Throws Error(usage) naming the available ones when this host has no congestion control `name`
// (checked on a throwaway socket, before anything is connected).
void check_congestion_control(const std::string& name);

// Runs the coroutine `make` returns on a fresh io_context with `threads` threads; rethrows what
// it threw.
void run_io(unsigned threads, const std::function<net::awaitable<void>(boost::asio::io_context&)>& make);

}  // namespace pxfer
