#include "listener.hpp"

#include <sys/socket.h>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <cerrno>
#include <utility>

#include <spdlog/spdlog.h>

#include "net/race.hpp"
#include "pxfer/error.hpp"

namespace pxfer::server {
namespace {

namespace asio = boost::asio;
using asio::ip::tcp;
using net::awaitable;
using net::use_tuple;

// The first byte tells TLS (a handshake record, 0x16) from a clear pxfer frame (a big-endian
// length, whose first byte is 0 for every frame within the limits): control connections and
// --encrypt data streams speak TLS, other data streams attach in the clear.
// A readiness wake-up is not a promise of data (the reactor may report a stale edge): EAGAIN
// means wait again, not "the peer went away" (that silently dropped about 1 connection in 2000
// under many concurrent small-file transfers: the client saw "TLS handshake ... truncated").
awaitable<int> peek_first_byte(tcp::socket& socket) {
  for (;;) {
    auto [ec] = co_await socket.async_wait(tcp::socket::wait_read, use_tuple);
    if (ec) co_return -1;
    std::uint8_t byte = 0;
    ssize_t n = ::recv(socket.native_handle(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
    if (n == 1) co_return byte;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) continue;
    co_return -1;
  }
}

awaitable<void> sleep_for(std::chrono::milliseconds d) {
  asio::steady_timer timer(co_await asio::this_coro::executor, d);
  co_await timer.async_wait(asio::use_awaitable);
}

}  // namespace

// Held by each accepted connection's coroutine for its whole life: the connection counts until
// serve_socket returns.
class Listener::Counted {
 public:
  Counted(Counts& c, std::string address) : c_(&c), address_(std::move(address)) {}
  Counted(Counted&& o) noexcept : c_(std::exchange(o.c_, nullptr)), address_(std::move(o.address_)) {}
  Counted& operator=(Counted&&) = delete;
  ~Counted() {
    if (!c_) return;
    std::lock_guard lock(c_->mutex);
    --c_->total;
    auto it = c_->per_address.find(address_);
    if (it != c_->per_address.end() && --it->second == 0) c_->per_address.erase(it);
  }

 private:
  Counts* c_;
  std::string address_;
};

Listener::Listener(asio::io_context& ioc, const ServerOptions& options, const std::atomic<bool>& stopping, Metrics& metrics)
    : ioc_(ioc), options_(options), stopping_(stopping), metrics_(metrics), acceptor_(ioc) {
  boost::system::error_code ec;
  auto address = asio::ip::make_address(options.listen.host.empty() ? "::" : options.listen.host, ec);
  if (ec) throw Error(Errc::usage, "--listen " + options.listen.host + ": not an IP address (use e.g. 127.0.0.1 or [::1])");
  tcp::endpoint ep(address, options.listen.port);
  acceptor_.open(ep.protocol(), ec);
  if (!ec) acceptor_.set_option(tcp::acceptor::reuse_address(true), ec);
  // The listening socket keeps default buffers, so the window scale offered in every SYN-ACK
  // is sized for autotuning; a pinned -w is applied per accepted data socket instead.
  if (!ec) acceptor_.bind(ep, ec);
  if (!ec) acceptor_.listen(asio::socket_base::max_listen_connections, ec);
  if (ec)
    throw Error(Errc::network, "cannot listen on " + net::endpoint_text(ep) + ": " + ec.message() +
                                   (ec == asio::error::address_in_use ? " (another pxferd running? choose another port)" : ""));
}

void Listener::track(const std::shared_ptr<net::Connection>& conn) {
  std::lock_guard lock(connections_mutex_);
  std::erase_if(connections_, [](const auto& w) { return w.expired(); });
  connections_.push_back(conn);
}

// Counts the connection in, or says why it is refused ("" = admitted).
std::string Listener::admit(const std::string& address) {
  std::lock_guard lock(counts_.mutex);
  unsigned& mine = counts_.per_address[address];
  std::string why;
  if (options_.max_connections > 0 && counts_.total >= options_.max_connections)
    why = "--max-connections " + std::to_string(options_.max_connections) + " reached";
  else if (options_.max_connections_per_address > 0 && mine >= options_.max_connections_per_address)
    why = "--max-connections-per-address " + std::to_string(options_.max_connections_per_address) + " reached";
  if (why.empty()) {
    ++counts_.total;
    ++mine;
    return why;
  }
  if (mine == 0) counts_.per_address.erase(address);
  auto now = Clock::now();
  auto [it, first] = counts_.refusal_logged.try_emplace(address, now);
  if (first || now - it->second >= std::chrono::minutes(1)) {
    it->second = now;
    if (counts_.refusal_logged.size() > 10000) counts_.refusal_logged.clear();  // bounded memory
    spdlog::warn("client={} connection refused: {} (logged once a minute per address)", address, why);
  }
  return why;
}

void Listener::set_tls(net::TlsContextPtr tls) {
  std::lock_guard lock(tls_mutex_);
  tls_ = std::move(tls);
}

net::TlsContextPtr Listener::current_tls() {
  std::lock_guard lock(tls_mutex_);
  return tls_;
}

awaitable<void> Listener::accept_loop(net::TlsContextPtr tls, Serve serve) {
  set_tls(std::move(tls));
  for (;;) {
    tcp::socket socket(asio::make_strand(ioc_));
    auto [ec] = co_await acceptor_.async_accept(socket, use_tuple);
    if (ec) {
      if (stopping_ || ec == asio::error::operation_aborted) co_return;
      spdlog::warn("accept failed: {}", ec.message());
      // Out of descriptors (EMFILE/ENFILE) or memory: pause instead of spinning on the error.
      co_await sleep_for(std::chrono::milliseconds(100));
      continue;
    }
    boost::system::error_code peer_ec;
    auto peer = socket.remote_endpoint(peer_ec);
    std::string address = peer_ec ? std::string("?") : peer.address().to_string();
    if (!admit(address).empty()) {
      socket.close(peer_ec);
      continue;
    }
    Counted counted(counts_, std::move(address));
    auto ex = socket.get_executor();
    // The context in force at accept: a reload (SIGHUP) swaps it for later connections only.
    asio::co_spawn(ex, serve_socket(std::move(counted), net::make_tcp_connection(std::move(socket)), current_tls(), serve),
                   asio::detached);
  }
}

awaitable<void> Listener::serve_socket([[maybe_unused]] Counted counted, std::shared_ptr<net::Connection> plain, net::TlsContextPtr tls,
                                       Serve serve) {
  track(plain);
  std::shared_ptr<net::Connection> conn = plain;
  try {
    auto first = co_await net::first_of(peek_first_byte(plain->socket()), sleep_for(options_.hello_timeout));
    if (!first || *first < 0 || stopping_) {
      plain->close();
      co_return;
    }
    if (*first == 0x16) {
      conn = net::make_tls_connection(std::move(plain->socket()), tls);
      track(conn);
      const std::string none;
      co_await net::tls_handshake(*conn, true, none, none);
    }
  } catch (const Error& e) {
    ++metrics_.tls_handshake_failures;
    spdlog::debug("{}: {}", conn->peer(), e.what());
    conn->close();
    co_return;
  }
  co_await serve(conn);
}

unsigned Listener::connections() {
  std::lock_guard lock(counts_.mutex);
  return counts_.total;
}

void Listener::close_all() {
  boost::system::error_code ignored;
  acceptor_.close(ignored);
  std::lock_guard lock(connections_mutex_);
  for (auto& w : connections_)
    if (auto c = w.lock()) c->close();
}

}  // namespace pxfer::server
