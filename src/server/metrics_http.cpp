// pxferd --metrics-listen: GET /metrics over plain HTTP/1.1 (Boost.Beast, synchronous, its own
// thread and io_context so nothing here shares the transfers' executors).
#include <sys/socket.h>
#include <sys/time.h>

#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <atomic>
#include <thread>

#include "net/connection.hpp"
#include "pxfer/error.hpp"
#include "pxfer/metrics_endpoint.hpp"

namespace pxfer {

namespace asio = boost::asio;
namespace http = boost::beast::http;
using asio::ip::tcp;

struct MetricsEndpoint::Impl {
  asio::io_context ioc;
  tcp::acceptor acceptor{ioc};
  std::function<std::string()> render;
  std::atomic<bool> stopping{false};
  std::thread thread;

  void answer(tcp::socket& socket) {
    timeval five{5, 0};  // a client that sends nothing does not hold the endpoint
    ::setsockopt(socket.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &five, sizeof five);
    ::setsockopt(socket.native_handle(), SOL_SOCKET, SO_SNDTIMEO, &five, sizeof five);
    boost::beast::flat_buffer buffer;
    http::request<http::string_body> request;
    boost::system::error_code ec;
    http::read(socket, buffer, request, ec);
    if (ec) return;
    http::response<http::string_body> response;
    response.version(request.version());
    response.keep_alive(false);
    if (request.method() == http::verb::get && request.target() == "/metrics") {
      response.result(http::status::ok);
      response.set(http::field::content_type, "text/plain; version=0.0.4; charset=utf-8");
      response.body() = render();
    } else {
      response.result(http::status::not_found);
      response.set(http::field::content_type, "text/plain");
      response.body() = "pxferd: only GET /metrics is served here\n";
    }
    response.prepare_payload();
    http::write(socket, response, ec);
    socket.shutdown(tcp::socket::shutdown_both, ec);
  }

  void serve() {
    while (!stopping) {
      tcp::socket socket(ioc);
      boost::system::error_code ec;
      acceptor.accept(socket, ec);
      if (stopping) return;
      if (ec) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));  // out of descriptors: do not spin
        continue;
      }
      answer(socket);
    }
  }
};

MetricsEndpoint::MetricsEndpoint(const Endpoint& listen, std::function<std::string()> render)
    : impl_(std::make_unique<Impl>()) {
  impl_->render = std::move(render);
  boost::system::error_code ec;
  auto address = asio::ip::make_address(listen.host, ec);
  if (ec) throw Error(Errc::usage, "--metrics-listen " + listen.host + ": not an IP address (use e.g. 127.0.0.1)");
  tcp::endpoint ep(address, listen.port);
  impl_->acceptor.open(ep.protocol(), ec);
  if (!ec) impl_->acceptor.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) impl_->acceptor.bind(ep, ec);
  if (!ec) impl_->acceptor.listen(16, ec);
  if (ec) throw Error(Errc::network, "--metrics-listen: cannot listen on " + net::endpoint_text(ep) + ": " + ec.message());
  impl_->thread = std::thread([this] { impl_->serve(); });
}

MetricsEndpoint::~MetricsEndpoint() {
  impl_->stopping = true;
  ::shutdown(impl_->acceptor.native_handle(), SHUT_RDWR);  // wakes the blocking accept
  impl_->thread.join();
}

std::string MetricsEndpoint::address() const { return net::endpoint_text(impl_->acceptor.local_endpoint()); }

}  // namespace pxfer
