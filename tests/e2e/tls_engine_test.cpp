// net/tls_engine: TLS driven through the engine's own buffers (docs/performance.md section 14), in
// this process over loopback, with io threads on two cores as pxferd runs them. Both ends write
// and read at once (one read and one write in flight on each connection), with parts of every
// size around a record's and a send's, and a TLS 1.3 key update in the middle: the answering end
// must send its own KeyUpdate from inside a read, while its writer may be sending. Every byte must
// arrive in order.
#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <random>
#include <thread>

#include "net/race.hpp"
#include "net/tls.hpp"
#include "server/identity.hpp"
#include "support/e2e.hpp"

namespace pxfer::e2e {
namespace {

namespace asio = boost::asio;
using asio::ip::tcp;
using Bytes = std::vector<std::uint8_t>;

Bytes pattern(std::size_t n, std::uint32_t seed) {
  Bytes b(n);
  std::mt19937 gen(seed);
  for (auto& x : b) x = static_cast<std::uint8_t>(gen());
  return b;
}

// Writes `data` in parts of awkward sizes (1 byte up to 300 KiB: inside a record, across records,
// across the engine's 256 KiB sends), asking for a key update after the first MiB when `rekey`.
net::awaitable<void> write_in_parts(net::Connection& conn, const Bytes& data, bool rekey) {
  static constexpr std::size_t sizes[] = {1, 5, 16384, 16385, 70000, 262144, 300000, 24, 100};
  std::size_t done = 0, i = 0;
  bool rekeyed = false;
  while (done < data.size()) {
    const std::size_t n = std::min(sizes[i++ % std::size(sizes)], data.size() - done);
    if (rekey && !rekeyed && done >= (1u << 20)) {
      net::request_key_update(conn);
      rekeyed = true;
    }
    if (i % 3 == 0) {
      const std::span<const std::uint8_t> all(data.data() + done, n);
      const std::array<std::span<const std::uint8_t>, 2> parts{all.first(n / 2), all.subspan(n / 2)};
      co_await conn.write_parts(parts);
    } else {
      co_await conn.write_all(std::span<const std::uint8_t>(data.data() + done, n));
    }
    done += n;
  }
}

net::awaitable<void> read_all(net::Connection& conn, Bytes& into) {
  co_await conn.read_exact(into);
}

TEST(TlsEngine, BothDirectionsAtOnceWithAKeyUpdateArriveWholeAndInOrder) {
  TempDir dir;
  const server::ServerIdentity identity = server::load_or_create_identity("", "", dir.subdir("identity"));
  auto server_tls = net::make_server_tls(net::ServerTlsConfig{identity.cert_file, identity.key_file, "", ""});
  auto client_tls = net::make_client_tls(net::ClientTlsConfig{});
  const Bytes to_server = pattern(7 * MiB + 12345, 1), to_client = pattern(5 * MiB + 777, 2);
  Bytes got_by_server(to_server.size()), got_by_client(to_client.size());
  std::string server_failure = "not finished", client_failure = "not finished";

  asio::io_context ioc;
  tcp::acceptor acceptor(ioc, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
  const auto endpoint = acceptor.local_endpoint();
  auto end_of = [](std::string& failure) {
    return [&failure](std::exception_ptr e) {
      failure.clear();
      if (!e) return;
      try {
        std::rethrow_exception(e);
      } catch (const std::exception& x) {
        failure = x.what();
      }
    };
  };
  asio::co_spawn(asio::make_strand(ioc), [&]() -> net::awaitable<void> {
    tcp::socket socket(co_await asio::this_coro::executor);
    co_await acceptor.async_accept(socket, asio::use_awaitable);
    auto conn = net::make_tls_connection(std::move(socket), server_tls);
    const std::string none;
    co_await net::tls_handshake(*conn, true, none, none);
    // The server asks for the key update: the client answers it from inside a read.
    co_await net::both(write_in_parts(*conn, to_client, true), read_all(*conn, got_by_server));
  }, end_of(server_failure));
  asio::co_spawn(asio::make_strand(ioc), [&]() -> net::awaitable<void> {
    tcp::socket socket(co_await asio::this_coro::executor);
    co_await socket.async_connect(endpoint, asio::use_awaitable);
    auto conn = net::make_tls_connection(std::move(socket), client_tls);
    const std::string host = "127.0.0.1";
    co_await net::tls_handshake(*conn, false, host, host);
    co_await net::both(write_in_parts(*conn, to_server, false), read_all(*conn, got_by_client));
  }, end_of(client_failure));
  std::thread other([&] { ioc.run(); });
  ioc.run();
  other.join();

  EXPECT_EQ(server_failure, "");
  EXPECT_EQ(client_failure, "");
  EXPECT_TRUE(got_by_server == to_server) << "the client's bytes arrived changed or out of order";
  EXPECT_TRUE(got_by_client == to_client) << "the server's bytes arrived changed or out of order";
}

}  // namespace
}  // namespace pxfer::e2e
