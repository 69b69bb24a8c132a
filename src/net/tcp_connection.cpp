#include <boost/asio/as_tuple.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <vector>

#include "connection.hpp"
#include "stream_io.hpp"
#include "pxfer/common/error.hpp"

namespace pxfer::net {
namespace {



class TcpConnection final : public Connection {
 public:
  explicit TcpConnection(tcp::socket socket) : socket_(std::move(socket)) {
    gate_ = std::make_unique<WriteGate>(socket_.get_executor());
    boost::system::error_code ec;
    auto ep = socket_.remote_endpoint(ec);
    peer_ = ec ? "unknown peer" : endpoint_text(ep);
    socket_.set_option(tcp::no_delay(true), ec);
  }

  awaitable<std::size_t> read_some(std::span<std::uint8_t> out) override {
    auto [ec, n] = co_await socket_.async_read_some(asio::buffer(out.data(), out.size()), use_tuple);
    if (ec) throw lost(ec);
    co_return n;
  }

  awaitable<void> read_exact(std::span<std::uint8_t> out, std::atomic<std::uint64_t>* progress) override {
    co_await read_exact_on(socket_, out, progress, [this](const boost::system::error_code& ec) { return lost(ec); });
  }

  awaitable<void> write_all(std::span<const std::uint8_t> data, std::atomic<std::uint64_t>* progress) override {
    co_await write_all_on(socket_, data, progress, [this](const boost::system::error_code& ec) { return lost(ec); });
  }

  // One gathering write (sendmsg of every part): a block's header, bytes and tag, or a run of
  // small files' frames and the files' bytes where they lie, without copying them together.
  awaitable<void> write_parts(std::span<const std::span<const std::uint8_t>> parts) override {
    std::vector<asio::const_buffer> buffers;
    buffers.reserve(parts.size());
    for (auto part : parts)
      if (!part.empty()) buffers.emplace_back(part.data(), part.size());
    // Asio's own completion conditions hand the socket at most 64 KiB per call (four times the
    // system calls for a run of small files, each pushing its own short segments: measured,
    // docs/performance.md section 25): as much as the parts hold, up to 16 MiB, instead.
    auto as_much_as_possible = [](const boost::system::error_code& e, std::size_t) -> std::size_t { return e ? 0 : 16u << 20; };
    auto [ec, n] = co_await asio::async_write(socket_, buffers, as_much_as_possible, use_tuple);
    if (ec) throw lost(ec);
  }

  void close() override {
    // Runs on the socket's strand; the shared_ptr keeps the socket alive until then.
    asio::post(socket_.get_executor(), [self = shared_from_this(), this] {
      boost::system::error_code ignored;
      socket_.shutdown(tcp::socket::shutdown_both, ignored);
      socket_.close(ignored);
    });
  }

  tcp::socket& socket() override { return socket_; }

 private:
  Error lost(const boost::system::error_code& ec) const {
    if (ec == asio::error::eof) return Error(Errc::network, "connection to " + peer_ + " closed by the peer");
    if (ec == asio::error::operation_aborted) return Error(Errc::network, "connection to " + peer_ + " was aborted");
    return Error(Errc::network, "connection to " + peer_ + " lost: " + ec.message());
  }
  tcp::socket socket_;
};

}  // namespace

awaitable<void> WriteGate::acquire() { co_await slot_.async_send(boost::system::error_code{}, asio::use_awaitable); }

void WriteGate::release() noexcept { slot_.try_receive([](boost::system::error_code) {}); }

awaitable<void> Connection::write_parts(std::span<const std::span<const std::uint8_t>> parts) {
  for (auto part : parts) co_await write_all(part);
}

std::string Connection::protection() const {
  const TlsInfo* t = tls();
  if (!t) return "clear";
  std::string v = t->version == "TLSv1.3" ? "TLS1.3" : t->version;
  return v + " (" + t->cipher + ")";
}

std::shared_ptr<Connection> make_tcp_connection(tcp::socket socket) {
  return std::make_shared<TcpConnection>(std::move(socket));
}

std::string endpoint_text(const tcp::endpoint& ep) {
  auto addr = ep.address();
  std::string host = addr.to_string();
  if (addr.is_v6()) host = std::string("[").append(host).append("]");
  return host + ":" + std::to_string(ep.port());
}

}  // namespace pxfer::net
