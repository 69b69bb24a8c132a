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
#include "pxfer/common/error.hpp"
#include "pxfer/core/limits.hpp"

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

// A counted connection: its address, the connection (the TLS one once it is wrapped), and
// whether it still counts (shedding takes it out of the counts at once, before its coroutine ends).
struct Listener::Slot {
  std::string address;
  std::weak_ptr<net::Connection> conn;
  bool counted = true;
  bool listed = false;  // in Counts::logging_in, at `place`
  std::list<std::shared_ptr<Slot>>::iterator place;
};

namespace {
void uncount(std::unordered_map<std::string, unsigned>& per_address, unsigned& total, const std::string& address) {
  --total;
  auto it = per_address.find(address);
  if (it != per_address.end() && --it->second == 0) per_address.erase(it);
}
}  // namespace

// Held by each accepted connection's coroutine for its whole life: the connection counts until
// serve_socket returns, or until it is shed.
class Listener::Counted {
 public:
  Counted(Counts& c, std::shared_ptr<Slot> slot) : c_(&c), slot_(std::move(slot)) {}
  Counted(Counted&& o) noexcept : c_(std::exchange(o.c_, nullptr)), slot_(std::move(o.slot_)) {}
  Counted& operator=(Counted&&) = delete;
  ~Counted() {
    if (!c_) return;
    std::lock_guard lock(c_->mutex);
    if (slot_->listed) c_->logging_in.erase(slot_->place);
    slot_->listed = false;
    if (slot_->counted) uncount(c_->per_address, c_->total, slot_->address);
    slot_->counted = false;
  }
  Slot& slot() { return *slot_; }

 private:
  Counts* c_;
  std::shared_ptr<Slot> slot_;
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

// Closes the oldest connection that has not logged in (from `address` only, when given); under
// counts_.mutex. False when there is none. The connection stops counting at once; the caller
// closes it once the lock is released.
bool Listener::shed_oldest(const std::string* address, std::vector<std::shared_ptr<net::Connection>>& closing) {
  auto& list = counts_.logging_in;
  for (auto it = list.begin(); it != list.end();) {
    Slot& slot = **it;
    auto conn = slot.conn.lock();
    if (!conn || conn->logged_in()) {  // done with logging in: no longer a candidate
      slot.listed = false;
      it = list.erase(it);
      continue;
    }
    if (address && slot.address != *address) {
      ++it;
      continue;
    }
    slot.listed = false;
    slot.counted = false;
    uncount(counts_.per_address, counts_.total, slot.address);
    list.erase(it);
    closing.push_back(std::move(conn));
    return true;
  }
  return false;
}

// Counts the connection in, or says why it is refused ("" = admitted). At a quota, connections
// that have not logged in make room, oldest first; only logged-in ones make a refusal.
std::string Listener::admit(const std::shared_ptr<Slot>& slot) {
  const std::string& address = slot->address;
  std::vector<std::shared_ptr<net::Connection>> closing;  // closed after the lock is released
  std::string why;
  {
    std::lock_guard lock(counts_.mutex);
    auto full = [&] { return options_.max_connections > 0 && counts_.total >= options_.max_connections; };
    auto address_full = [&] {
      auto it = counts_.per_address.find(address);
      const unsigned mine = it == counts_.per_address.end() ? 0u : it->second;
      return options_.max_connections_per_address > 0 && mine >= options_.max_connections_per_address;
    };
    while (full() && shed_oldest(nullptr, closing)) {
    }
    while (address_full() && shed_oldest(&address, closing)) {
    }
    if (counts_.logging_in.size() >= limits::max_connections_logging_in) {
      std::erase_if(counts_.logging_in, [](const std::shared_ptr<Slot>& s) {
        auto c = s->conn.lock();
        const bool done = !c || c->logged_in();
        if (done) s->listed = false;
        return done;
      });
      while (counts_.logging_in.size() >= limits::max_connections_logging_in && shed_oldest(nullptr, closing)) {
      }
    }
    if (full()) why = "--max-connections " + std::to_string(options_.max_connections) + " reached";
    else if (address_full())
      why = "--max-connections-per-address " + std::to_string(options_.max_connections_per_address) + " reached";
    if (why.empty()) {
      ++counts_.total;
      ++counts_.per_address[address];
      slot->place = counts_.logging_in.insert(counts_.logging_in.end(), slot);
      slot->listed = true;
    } else {
      slot->counted = false;
      log_refusal(address, why);
    }
  }
  if (!closing.empty())
    spdlog::debug("{} connection(s) that had not logged in closed to admit client={}", closing.size(), address);
  for (auto& c : closing) c->close();
  return why;
}

// Under counts_.mutex: a refusal, logged once a minute per address.
void Listener::log_refusal(const std::string& address, const std::string& why) {
  auto now = Clock::now();
  auto [it, first] = counts_.refusal_logged.try_emplace(address, now);
  if (first || now - it->second >= std::chrono::minutes(1)) {
    it->second = now;
    if (counts_.refusal_logged.size() > 10000) counts_.refusal_logged.clear();  // bounded memory
    spdlog::warn("client={} connection refused: {} (logged once a minute per address)", address, why);
  }
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
    auto slot = std::make_shared<Slot>();
    slot->address = peer_ec ? std::string("?") : peer.address().to_string();
    auto ex = socket.get_executor();
    auto plain = net::make_tcp_connection(std::move(socket));
    slot->conn = plain;
    if (!admit(slot).empty()) {
      plain->close();
      continue;
    }
    Counted counted(counts_, std::move(slot));
    // The context in force at accept: a reload (SIGHUP) swaps it for later connections only.
    asio::co_spawn(ex, serve_socket(std::move(counted), std::move(plain), current_tls(), serve), asio::detached);
  }
}

awaitable<void> Listener::serve_socket(Counted counted, std::shared_ptr<net::Connection> plain, net::TlsContextPtr tls,
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
      {
        std::lock_guard lock(counts_.mutex);
        counted.slot().conn = conn;  // the one a login marks, and the one to close when shedding
      }
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
