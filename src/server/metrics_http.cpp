// pxferd --metrics-listen: GET /metrics over plain HTTP/1.1 (Boost.Beast), on its own thread and
// io_context so nothing here shares the transfers' executors. Each scraper is a coroutine of its
// own with one deadline for its whole request and answer (limits::metrics_request_deadline), so a
// scraper that connects and sends nothing, or trickles a byte a second, delays no other scrape.
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http.hpp>
#include <thread>

#include "net/connection.hpp"
#include "pxfer/common/error.hpp"
#include "pxfer/core/limits.hpp"
#include "pxfer/server/metrics_endpoint.hpp"

namespace pxfer {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using asio::ip::tcp;

namespace {

const auto no_throw = asio::as_tuple(asio::use_awaitable);

http::response<http::string_body> answer_to(const http::request<http::string_body>& request,
                                            const std::function<std::string()>& render) {
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
  return response;
}

}  // namespace

struct MetricsEndpoint::Impl {
  asio::io_context ioc;
  tcp::acceptor acceptor{ioc};
  std::function<std::string()> render;
  std::size_t serving = 0;  // scrapers connected now; only the io_context's one thread touches it
  std::thread thread;

  asio::awaitable<void> serve(tcp::socket socket) {
    beast::tcp_stream stream(std::move(socket));
    // One deadline for everything below: set once, it bounds the read and the write together.
    stream.expires_after(limits::metrics_request_deadline);
    beast::flat_buffer buffer(limits::metrics_request_head_bytes);
    http::request_parser<http::string_body> parser;
    parser.header_limit(limits::metrics_request_head_bytes);
    parser.body_limit(limits::metrics_request_head_bytes);
    auto [read_error, read_bytes] = co_await http::async_read(stream, buffer, parser, no_throw);
    if (!read_error) {
      auto response = answer_to(parser.get(), render);
      auto [write_error, written] = co_await http::async_write(stream, response, no_throw);
      (void)written;
      boost::system::error_code ignored;
      if (!write_error) stream.socket().shutdown(tcp::socket::shutdown_both, ignored);
    }
    (void)read_bytes;
    --serving;
  }

  asio::awaitable<void> accept_loop() {
    for (;;) {
      auto [ec, socket] = co_await acceptor.async_accept(no_throw);
      if (ec == asio::error::operation_aborted || !acceptor.is_open()) co_return;
      if (ec) {  // out of descriptors: do not spin
        asio::steady_timer pause(ioc, std::chrono::milliseconds(100));
        co_await pause.async_wait(no_throw);
        continue;
      }
      // Past the cap a new scraper is closed at once; the ones already served keep their deadline.
      if (serving >= limits::metrics_connections) continue;
      ++serving;
      asio::co_spawn(ioc, serve(std::move(socket)), asio::detached);
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
  if (!ec) impl_->acceptor.listen(64, ec);
  if (ec) throw Error(Errc::network, "--metrics-listen: cannot listen on " + net::endpoint_text(ep) + ": " + ec.message());
  asio::co_spawn(impl_->ioc, impl_->accept_loop(), asio::detached);
  impl_->thread = std::thread([this] { impl_->ioc.run(); });
}

MetricsEndpoint::~MetricsEndpoint() {
  impl_->ioc.stop();  // the scrapers' coroutines are destroyed with the io_context
  impl_->thread.join();
}

std::string MetricsEndpoint::address() const { return net::endpoint_text(impl_->acceptor.local_endpoint()); }

}  // namespace pxfer
