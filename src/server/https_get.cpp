#include "https_get.hpp"

#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

#include "pxfer/common/error.hpp"

namespace pxfer::server {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
using asio::ip::tcp;

struct Target {
  std::string host, port = "443", path = "/";
};

Target target_of(const std::string& url) {
  if (url.rfind("https://", 0) != 0) throw Error(Errc::network, url + ": not an https:// URL");
  const std::string rest = url.substr(8);
  const auto slash = rest.find('/');
  const std::string authority = rest.substr(0, slash);
  Target t;
  if (slash != std::string::npos) t.path = rest.substr(slash);
  const auto close = authority.find(']');
  const auto colon = authority.rfind(':');
  if (authority.rfind('[', 0) == 0 && close != std::string::npos) {  // [IPv6]:PORT
    t.host = authority.substr(1, close - 1);
    if (close + 1 < authority.size() && authority[close + 1] == ':') t.port = authority.substr(close + 2);
  } else if (colon != std::string::npos) {
    t.host = authority.substr(0, colon);
    t.port = authority.substr(colon + 1);
  } else {
    t.host = authority;
  }
  if (t.host.empty() || t.port.empty()) throw Error(Errc::network, url + ": no host (https://HOST[:PORT]/PATH)");
  return t;
}

// The host name (or address) the certificate must name, and SNI for a name.
void expect_host(SSL* s, const std::string& host) {
  boost::system::error_code ec;
  asio::ip::make_address(host, ec);
  if (!ec) {
    X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(s), host.c_str());
  } else {
    SSL_set_tlsext_host_name(s, host.c_str());
    SSL_set1_host(s, host.c_str());
  }
}

asio::awaitable<std::string> fetch(ssl::context& ctx, Target t, std::chrono::milliseconds timeout, std::size_t max_bytes) {
  auto ex = co_await asio::this_coro::executor;
  tcp::resolver resolver(ex);
  const auto endpoints = co_await resolver.async_resolve(t.host, t.port, asio::use_awaitable);
  beast::ssl_stream<beast::tcp_stream> stream(ex, ctx);
  expect_host(stream.native_handle(), t.host);
  beast::get_lowest_layer(stream).expires_after(timeout);
  co_await beast::get_lowest_layer(stream).async_connect(endpoints, asio::use_awaitable);
  try {
    co_await stream.async_handshake(ssl::stream_base::client, asio::use_awaitable);
  } catch (const boost::system::system_error&) {
    const long verify = SSL_get_verify_result(stream.native_handle());
    if (verify != X509_V_OK)
      throw Error(Errc::network, std::string("its certificate does not verify: ") + X509_verify_cert_error_string(verify));
    throw;
  }
  http::request<http::empty_body> request{http::verb::get, t.path, 11};
  request.set(http::field::host, t.host);
  request.set(http::field::user_agent, "pxferd");
  request.set(http::field::accept, "application/json");
  co_await http::async_write(stream, request, asio::use_awaitable);
  beast::flat_buffer buffer;
  http::response_parser<http::string_body> parser;
  parser.body_limit(max_bytes);
  co_await http::async_read(stream, buffer, parser, asio::use_awaitable);
  const auto status = parser.get().result_int();
  if (status != 200) throw Error(Errc::network, "HTTP status " + std::to_string(status) + ", not 200");
  co_return parser.release().body();
}

}  // namespace

std::string https_get(const std::string& url, const std::string& ca_file, std::chrono::milliseconds timeout,
                      std::size_t max_bytes) {
  const Target target = target_of(url);
  ssl::context ctx(ssl::context::tls_client);
  SSL_CTX_set_min_proto_version(ctx.native_handle(), TLS1_2_VERSION);
  ctx.set_verify_mode(ssl::verify_peer);
  boost::system::error_code ec;
  if (ca_file.empty()) {
    ctx.set_default_verify_paths(ec);
  } else {
    ctx.load_verify_file(ca_file, ec);
  }
  if (ec) throw Error(Errc::usage, "cannot use the CA file " + (ca_file.empty() ? "store" : ca_file) + ": " + ec.message());
  asio::io_context io;
  std::string body;
  std::exception_ptr failure;
  bool done = false;
  asio::co_spawn(io, fetch(ctx, target, timeout, max_bytes), [&](std::exception_ptr e, std::string b) {
    failure = e;
    body = std::move(b);
    done = true;
  });
  io.run_for(timeout + std::chrono::seconds(1));  // the resolver has no deadline of its own
  const std::string seconds = std::to_string(timeout.count() / 1000.0).substr(0, 4) + " s";
  if (!done) throw Error(Errc::network, "GET " + url + ": no answer within " + seconds);
  try {
    if (failure) std::rethrow_exception(failure);
  } catch (const Error& e) {
    throw Error(e.code(), "GET " + url + ": " + e.what());
  } catch (const boost::system::system_error& e) {
    if (e.code() == beast::error::timeout) throw Error(Errc::network, "GET " + url + ": no answer within " + seconds);
    if (e.code() == http::error::body_limit)
      throw Error(Errc::network, "GET " + url + ": the answer is over " + std::to_string(max_bytes) + " bytes");
    throw Error(Errc::network, "GET " + url + ": " + e.code().message());
  }
  return body;
}

}  // namespace pxfer::server
