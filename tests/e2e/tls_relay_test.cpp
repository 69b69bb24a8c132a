// Under --encrypt a data stream's blocks carry no Poly1305 of their own (cap_tls_bound_streams,
// checksum/block_mac.hpp): TLS authenticates every byte of the connection, and the stream's
// ATTACH_PROOF is bound to that connection's own TLS channel (an exporter of it). This test is the
// attacker the binding stops: a relay that holds pxferd's certificate and key (a stolen key, or a
// TLS-inspecting middlebox) passes the control connection through untouched and terminates the TLS
// of every data stream, forwarding ATTACH (and the challenge and the proof, where the proof does not
// come in ATTACH itself), and then sends a forged
// block of its own with the zero tag. The relayed proof must be refused (it is bound to the
// client-relay channel, the server checks it against the relay-server one), the relay must never
// see ATTACH_OK, and nothing may be stored. With the binding left out of the proof (both ends),
// the relay is let in and its forged block lands in the file: docs/security.md.
#include <gtest/gtest.h>

#include <atomic>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <thread>

#include "net/frame_io.hpp"
#include "net/tls.hpp"
#include "server/identity.hpp"
#include "support/e2e.hpp"

namespace pxfer::e2e {
namespace {

namespace asio = boost::asio;
using asio::ip::tcp;
using Bytes = std::vector<std::uint8_t>;

// A BLOCK frame at offset 0 of `length` bytes that are not the file's, with the 16 zero bytes a
// block carries as its tag on a TLS-bound stream.
Bytes forged_block(std::uint32_t length) {
  Bytes f;
  auto put = [&f](std::uint64_t v, int bytes) {
    for (int i = bytes - 1; i >= 0; --i) f.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
  };
  put(16 + length + 16, 4);
  put(7, 2);  // BLOCK (docs/protocol.md)
  put(0, 2);
  put(0, 8);       // offset
  put(length, 4);  // raw length
  put(0, 4);       // flags
  const std::string text = "FORGED BY A TLS-TERMINATING RELAY ";
  for (std::uint32_t i = 0; i < length; ++i) f.push_back(static_cast<std::uint8_t>(text[i % text.size()]));
  f.insert(f.end(), 16, 0);
  return f;
}

class TlsRelay {
 public:
  TlsRelay(std::uint16_t upstream, const server::ServerIdentity& identity, std::uint32_t block_size)
      : upstream_(asio::ip::make_address("127.0.0.1"), upstream),
        block_size_(block_size),
        as_server_(net::make_server_tls(net::ServerTlsConfig{identity.cert_file, identity.key_file, "", ""})),
        as_client_(net::make_client_tls(net::ClientTlsConfig{})),
        acceptor_(ioc_, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0)) {
    asio::co_spawn(ioc_, accept_loop(), asio::detached);
    thread_ = std::thread([this] { ioc_.run(); });
  }
  ~TlsRelay() {
    ioc_.stop();
    thread_.join();
  }
  std::uint16_t port() const { return acceptor_.local_endpoint().port(); }
  unsigned proofs_relayed() const { return proofs_.load(); }
  bool let_in() const { return let_in_.load(); }

 private:
  asio::awaitable<void> accept_loop() {
    for (bool first = true;; first = false) {
      tcp::socket socket = co_await acceptor_.async_accept(asio::use_awaitable);
      if (first)
        asio::co_spawn(ioc_, pass_through(std::move(socket)), asio::detached);  // the control connection
      else
        asio::co_spawn(ioc_, relay(std::move(socket)), asio::detached);
    }
  }

  static asio::awaitable<void> pump(std::shared_ptr<tcp::socket> from, std::shared_ptr<tcp::socket> to) {
    std::array<char, 65536> buf{};
    try {
      for (;;) {
        std::size_t n = co_await from->async_read_some(asio::buffer(buf), asio::use_awaitable);
        co_await asio::async_write(*to, asio::buffer(buf.data(), n), asio::use_awaitable);
      }
    } catch (const std::exception&) {
    }
    boost::system::error_code ignored;
    to->shutdown(tcp::socket::shutdown_both, ignored);
    from->shutdown(tcp::socket::shutdown_both, ignored);
  }

  asio::awaitable<void> pass_through(tcp::socket client) {
    auto down = std::make_shared<tcp::socket>(std::move(client));
    auto up = std::make_shared<tcp::socket>(ioc_);
    co_await up->async_connect(upstream_, asio::use_awaitable);
    asio::co_spawn(ioc_, pump(up, down), asio::detached);
    co_await pump(down, up);
  }

  // A data stream: TLS ended here and started again towards pxferd, its first frames relayed.
  asio::awaitable<void> relay(tcp::socket client) {
    try {
      auto down = net::make_tls_connection(std::move(client), as_server_);
      const std::string none;
      co_await net::tls_handshake(*down, true, none, none);
      tcp::socket socket(ioc_);
      co_await socket.async_connect(upstream_, asio::use_awaitable);
      auto up = net::make_tls_connection(std::move(socket), as_client_);
      const std::string host = "127.0.0.1";
      co_await net::tls_handshake(*up, false, host, host);
      wire::Message attach = co_await net::read_message(*down);
      co_await net::send_message(*up, attach);
      // The proof comes in ATTACH itself (cap_attach_proven), or answers the server's challenge.
      const auto* proven = std::get_if<wire::Attach>(&attach);
      if (!proven || !proven->has_proof) {
        wire::Message challenge = co_await net::read_message(*up);
        co_await net::send_message(*down, challenge);
        if (!std::holds_alternative<wire::AttachChallenge>(challenge)) co_return;
        wire::Message proof = co_await net::read_message(*down);
        co_await net::send_message(*up, proof);
      }
      ++proofs_;
      wire::Message verdict = co_await net::read_message(*up);
      if (std::holds_alternative<wire::AttachOk>(verdict)) {
        let_in_ = true;
        const Bytes forged = forged_block(block_size_);
        co_await up->write_all(forged);
      }
      co_await net::send_message(*down, verdict);
    } catch (const std::exception&) {
      // either side went away
    }
  }

  tcp::endpoint upstream_;
  std::uint32_t block_size_;
  net::TlsContextPtr as_server_;
  net::TlsContextPtr as_client_;
  asio::io_context ioc_;
  tcp::acceptor acceptor_;
  std::thread thread_;
  std::atomic<unsigned> proofs_{0};
  std::atomic<bool> let_in_{false};
};

TEST(TlsRelay, ARelayHoldingTheServerKeyCannotJoinAnEncryptedTransferOrForgeItsBlocks) {
  TestDirs scratch;
  // pxferd's certificate and key where the relay can read them too.
  const server::ServerIdentity identity = server::load_or_create_identity("", "", scratch.dir.subdir("identity"));
  ServerProcess server = scratch.serve({"--cert", identity.cert_file, "--key", identity.key_file});
  TlsRelay relay(server.port(), identity, 1 << 20);
  pin_server("127.0.0.1:" + std::to_string(relay.port()), server.fingerprint());
  const std::string src = scratch.dir / "src.bin";
  make_file(src, 8 * MiB, 4242);
  RunResult put = run_pxfer("put", "-p", "2", "--encrypt", "--block-size", "1M", src,
                            "pxfer://127.0.0.1:" + std::to_string(relay.port()) + "/dst.bin");
  SCOPED_TRACE("--- pxfer:\n" + put.out + put.err + "--- pxferd:\n" + server.log());
  ASSERT_GE(relay.proofs_relayed(), 1u) << "no data stream went through the relay";
  EXPECT_FALSE(relay.let_in()) << "pxferd accepted a data stream proven over another TLS channel";
  EXPECT_NE(put.exit_code, 0) << "every data stream went through the relay, so the put cannot succeed";
  EXPECT_FALSE(path_exists(scratch.root + "/dst.bin")) << "something was stored under the final name";
  EXPECT_NE(server.log().find("no valid proof"), std::string::npos);
}

}  // namespace
}  // namespace pxfer::e2e
