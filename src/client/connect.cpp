#include "connect.hpp"

#include <sys/socket.h>
#include <unistd.h>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include <spdlog/spdlog.h>

#include "known_hosts.hpp"
#include "net/frame_io.hpp"
#include "pxfer/common/error.hpp"
#include "pxfer/common/log_safe.hpp"
#include "pxfer/version.hpp"

namespace pxfer {
namespace {

namespace asio = boost::asio;
using asio::ip::tcp;
using net::awaitable;
using namespace asio::experimental::awaitable_operators;
using net::use_tuple;

std::string connect_error_text(const std::string& authority, const boost::system::error_code& ec) {
  std::string text = "cannot connect to " + authority + ": ";
  if (ec == asio::error::connection_refused) return text + "connection refused (is pxferd running?)";
  if (ec == asio::error::timed_out || ec == asio::error::operation_aborted)
    return text + "timed out (is a firewall dropping the connection?)";
  return text + ec.message();
}

std::mutex process_trust_mutex;
std::shared_ptr<ClientTrust> process_trust = std::make_shared<ClientTrust>(ClientSecurity{});

}  // namespace

void set_client_security(ClientSecurity security) {
  auto trust = std::make_shared<ClientTrust>(std::move(security));
  std::lock_guard lock(process_trust_mutex);
  process_trust = std::move(trust);
}

std::shared_ptr<ClientTrust> current_trust() {
  std::lock_guard lock(process_trust_mutex);
  return process_trust;
}

std::string default_known_hosts_file() {
  if (const char* x = std::getenv("PXFER_KNOWN_HOSTS"); x && *x) return x;
  if (const char* x = std::getenv("XDG_CONFIG_HOME"); x && *x) return std::string(x) + "/pxfer/known_hosts";
  const char* home = std::getenv("HOME");
  return std::string(home && *home ? home : ".") + "/.config/pxfer/known_hosts";
}

std::string normalize_fingerprint(const std::string& text) { return net::normalize_fingerprint(text); }

net::TlsContextPtr ClientTrust::tls_context() {
  std::lock_guard lock(mutex_);
  if (!tls_) tls_ = net::make_client_tls(net::ClientTlsConfig{settings_.ca_file, settings_.cert_file, settings_.key_file});
  return tls_;
}

void ClientTrust::verify_server(const net::Connection& conn, const std::string& authority) {
  const net::TlsInfo* tls = conn.tls();
  if (!tls || tls->peer_fingerprint.empty())
    throw Error(Errc::permission, authority + " presented no certificate; refusing to connect");
  // --ca was checked in the handshake; --fingerprint applies as well when both are given.
  if (!settings_.fingerprint.empty()) {
    if (net::normalize_fingerprint(settings_.fingerprint) != tls->peer_fingerprint)
      throw Error(Errc::permission, "the certificate of " + authority + " is " + tls->peer_fingerprint +
                                        ", not the --fingerprint given; refusing to connect");
  } else if (settings_.ca_file.empty()) {
    std::string file = settings_.known_hosts_file.empty() ? default_known_hosts_file() : settings_.known_hosts_file;
    if (auto warning = trust_on_first_use(file, authority, tls->peer_fingerprint))
      std::fprintf(stderr, "pxfer: warning: %s\n", warning->c_str());
  }
  std::lock_guard lock(mutex_);
  verified_[authority] = tls->peer_fingerprint;
}

std::string ClientTrust::verified_fingerprint(const std::string& authority) const {
  std::lock_guard lock(mutex_);
  auto it = verified_.find(authority);
  return it == verified_.end() ? std::string() : it->second;
}

// The window is pinned before connect() so the SYN offers a window scale that fits it.
awaitable<tcp::socket> connect_socket(asio::any_io_executor ex, const tcp::resolver::results_type& endpoints,
                                      const SocketTuning& tuning, std::chrono::milliseconds timeout,
                                      const std::string& authority, BufferGrant* grant) {
  boost::system::error_code last = asio::error::host_not_found;
  for (const auto& entry : endpoints) {
    tcp::socket socket(ex);
    socket.open(entry.endpoint().protocol());
    BufferGrant g = tune_socket(socket.native_handle(), tuning);
    asio::steady_timer timer(ex, timeout);
    auto result = co_await (socket.async_connect(entry.endpoint(), use_tuple) || timer.async_wait(use_tuple));
    if (result.index() == 0) {
      auto [ec] = std::get<0>(result);
      if (!ec) {
        if (grant) *grant = g;
        co_return socket;
      }
      last = ec;
    } else {
      last = asio::error::timed_out;
    }
  }
  throw Error(Errc::network, connect_error_text(authority, last));
}

std::string describe_protection(const net::Connection& control, bool encrypt, bool tls_bound) {
  std::string text = "control " + control.protection() + ", data ";
  // Every block carries a Poly1305 tag keyed from the control connection's TLS session (issue 11).
  if (!encrypt) return text + "authenticated (Poly1305 per block, not encrypted)";
  std::string p = control.protection();
  if (!p.empty() && p.back() == ')') p.pop_back();
  return "control " + control.protection() + ", data encrypted " + p +
         (net::kernel_tls_available() ? ", OpenSSL user space" : ", OpenSSL user space: no kernel TLS") +
         (tls_bound ? ", streams bound to the control session)" : ", Poly1305 per block too)");
}

std::string describe_small_protection(const net::Connection& control, bool channel) {
  if (channel) return "control " + control.protection() + ", data authenticated (Poly1305 per file on the small-file channel, not encrypted)";
  return "control " + control.protection() + ", data inside it (a small file in one frame)";
}

awaitable<std::shared_ptr<net::Connection>> open_data_connection(tcp::socket& socket, const bool& encrypt,
                                                                 const ControlLink& link) {
  if (!encrypt) co_return net::make_tcp_connection(std::move(socket));
  const std::string expected = link.trust->verified_fingerprint(link.authority);
  auto conn = net::make_tls_connection(std::move(socket), link.trust->tls_context());
  // The name the user typed, as for the control connection: a certificate may carry no address.
  co_await net::tls_handshake(*conn, false, link.host, link.authority);
  if (conn->tls()->peer_fingerprint != expected)
    throw Error(Errc::permission, "a data stream to " + link.authority + " met a different certificate (" +
                                      conn->tls()->peer_fingerprint + ") than the control connection; refusing it");
  co_return conn;
}

awaitable<ControlLink> open_control(const Url& remote, std::chrono::milliseconds connect_timeout,
                                    std::shared_ptr<ClientTrust> trust) {
  auto ex = co_await asio::this_coro::executor;
  tcp::resolver resolver(ex);
  const std::string service = std::to_string(remote.port);
  auto [rec, endpoints] = co_await resolver.async_resolve(remote.host, service, use_tuple);
  if (rec) throw Error(Errc::network, "cannot resolve host " + remote.host + ": " + rec.message());
  ControlLink link;
  link.authority = remote.authority();
  link.host = remote.host;
  link.trust = std::move(trust);
  const SocketTuning control_tuning;  // named: g++ 12 mishandles temporaries across co_await
  auto socket = co_await connect_socket(ex, endpoints, control_tuning, connect_timeout, link.authority, nullptr);
  // Data streams go to the address the control connection reached, not to a fresh lookup.
  link.data_endpoints = tcp::resolver::results_type::create(socket.remote_endpoint(), remote.host, service);
  enable_keepalive(socket.native_handle(), 60);
  // TLS 1.3 always; the server's identity is checked before anything is sent.
  link.connection = net::make_tls_connection(std::move(socket), link.trust->tls_context());
  co_await net::tls_handshake(*link.connection, false, remote.host, link.authority);
  link.trust->verify_server(*link.connection, link.authority);
  spdlog::debug("control connection to {} ({}), {}", link.authority, link.connection->peer(),
                link.connection->protection());
  wire::Message hello = wire::Hello{wire::protocol_version, wire::protocol_version, wire::our_capabilities, client_agent};
  co_await net::send_message(*link.connection, hello);
  wire::Message auth = wire::Auth{link.trust->settings().token};
  co_await net::send_message(*link.connection, auth);
  wire::Message reply = co_await net::read_message(*link.connection);
  link.hello = net::expect<wire::HelloOk>(std::move(reply), link.connection->peer());
  wire::Message auth_reply = co_await net::read_message(*link.connection);
  link.auth = net::expect<wire::AuthOk>(std::move(auth_reply), link.connection->peer());
  spdlog::debug("authenticated to {} ({}) as {}", link.authority, log_safe(link.hello.agent), log_safe(link.auth.identity));
  co_return link;
}

awaitable<ControlLink> open_control(const Url& remote, std::chrono::milliseconds connect_timeout) {
  return open_control(remote, connect_timeout, current_trust());
}

void check_congestion_control(const std::string& name) {
  if (name.empty()) return;
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  try {
    tune_socket(fd, SocketTuning{0, name, 0});
  } catch (...) {
    ::close(fd);
    throw;
  }
  ::close(fd);
}

void run_io(unsigned threads, const std::function<awaitable<void>(asio::io_context&)>& make) {
  asio::io_context ioc;
  std::exception_ptr failure;
  asio::co_spawn(asio::make_strand(ioc), make(ioc), [&](std::exception_ptr e) { failure = e; });
  std::vector<std::thread> workers;
  for (unsigned i = 1; i < threads; ++i) workers.emplace_back([&ioc] { ioc.run(); });
  ioc.run();
  for (auto& w : workers) w.join();
  if (failure) std::rethrow_exception(failure);
}

}  // namespace pxfer
