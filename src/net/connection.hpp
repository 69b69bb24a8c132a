#pragma once
// A byte stream to the peer (control or data). Plain TCP now; TLS implements the same interface,
// so framing and the engine never know which one they talk through.
#include "pxfer/io/layer.hpp"
#include <atomic>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/experimental/concurrent_channel.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

namespace pxfer::net {

namespace asio = boost::asio;
// co_await op(use_tuple): errors as values on the hot path, no exception per closed connection.
inline constexpr auto use_tuple = asio::as_tuple(asio::use_awaitable);
using tcp = asio::ip::tcp;
template <class T>
using awaitable = asio::awaitable<T>;

// One frame at a time on a connection that several coroutines write to (the control connection
// carries STATS from a reporter while the transfer's own messages go out): a semaphore made of
// a one-slot channel, so a frame is never interleaved with another.
class WriteGate {
 public:
  explicit WriteGate(asio::any_io_executor ex) : slot_(std::move(ex), 1) {}
  awaitable<void> acquire();
  void release() noexcept;

 private:
  asio::experimental::concurrent_channel<void(boost::system::error_code)> slot_;
};

// What TLS negotiated on a connection (see tls.hpp); absent on plain TCP.
struct TlsInfo {
  std::string version;      // "TLSv1.3"
  std::string cipher;       // "TLS_AES_256_GCM_SHA384"
  std::string peer_fingerprint;  // "sha256:HEX" of the peer's certificate, "" when it sent none
  std::string peer_cn;           // subject CN of the peer's certificate
  bool peer_verified = false;    // the peer's chain verified against the configured CA
  std::string verify_error;      // why not, when a certificate was sent but did not verify
  // Grid X.509 only (ServerTlsConfig::x509_ca_dir): the end-entity DN of a verified chain, how many
  // proxies sat above it, and the chain as the peer sent it (PEM, leaf first) for its VOMS attributes.
  std::string peer_dn;
  unsigned peer_proxies = 0;
  std::string peer_chain_pem;
};

class Connection : public std::enable_shared_from_this<Connection> {
 public:
  virtual ~Connection() = default;
  // Reads exactly out.size() bytes, adding to `progress` as they arrive. Throws Error(network)
  // on EOF or failure, naming the peer.
  // Reads what is available, at least one byte (throws like read_exact).
  virtual awaitable<std::size_t> read_some(std::span<std::uint8_t> out) = 0;
  virtual awaitable<void> read_exact(std::span<std::uint8_t> out, std::atomic<std::uint64_t>* progress = nullptr) = 0;
  virtual awaitable<void> write_all(std::span<const std::uint8_t> data, std::atomic<std::uint64_t>* progress = nullptr) = 0;
  // write_all of each part in turn. Under TLS, parts that add up to little are copied into one
  // write: a small block's headers, payload and tag leave as one run of records and one send,
  // not three (docs/performance.md section 5).
  virtual awaitable<void> write_parts(std::span<const std::span<const std::uint8_t>> parts);
  // True when bytes from the peer are here already (a read would not wait for the network). A
  // hint: false when unsure. A batch of pipelined requests ends where it returns false.
  virtual bool has_buffered_input() {
    boost::system::error_code ec;
    return socket().available(ec) > 0 && !ec;
  }
  // Closes from the connection's own executor; safe to call from any thread, more than once.
  virtual void close() = 0;
  virtual tcp::socket& socket() = 0;
  const std::string& peer() const { return peer_; }
  // TLS parameters, or nullptr for a clear TCP connection.
  virtual const TlsInfo* tls() const { return nullptr; }
  // "TLS1.3 (TLS_AES_256_GCM_SHA384)" or "clear"
  std::string protection() const;
  WriteGate& write_gate() { return *gate_; }
  // Set once the peer proved who it is (a control session's AUTH, a data stream's ATTACH proof):
  // until then pxferd may close the connection to make room for others (server/listener.hpp).
  void mark_logged_in() { logged_in_.store(true, std::memory_order_relaxed); }
  bool logged_in() const { return logged_in_.load(std::memory_order_relaxed); }

 protected:
  std::string peer_;
  std::unique_ptr<WriteGate> gate_;
  std::atomic<bool> logged_in_{false};
};

std::shared_ptr<Connection> make_tcp_connection(tcp::socket socket);
// "127.0.0.1:5000" / "[::1]:5000"
std::string endpoint_text(const tcp::endpoint& ep);

}  // namespace pxfer::net
