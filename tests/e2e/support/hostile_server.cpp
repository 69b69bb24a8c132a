#include "support/hostile_server.hpp"

#include <atomic>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <thread>

#include "net/frame_io.hpp"
#include "net/tls.hpp"
#include "server/identity.hpp"

namespace pxfer::e2e {

namespace asio = boost::asio;
using asio::ip::tcp;

struct HostileServer::Impl {
  Impl(const std::string& state_dir, std::vector<wire::ListEntry> entries)
      : listing(std::move(entries)),
        identity(server::load_or_create_identity("", "", state_dir)),
        tls(net::make_server_tls(net::ServerTlsConfig{identity.cert_file, identity.key_file, "", ""})),
        acceptor(ioc, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0)) {
    asio::co_spawn(ioc, accept_loop(), asio::detached);
    thread = std::thread([this] { ioc.run(); });
  }
  ~Impl() {
    ioc.stop();
    thread.join();
  }

  asio::awaitable<void> accept_loop() {
    for (;;) {
      tcp::socket socket = co_await acceptor.async_accept(asio::use_awaitable);
      asio::co_spawn(ioc, serve(net::make_tls_connection(std::move(socket), tls)), asio::detached);
    }
  }

  // HELLO, AUTH, then LIST answered with the chosen entries; anything else refused.
  asio::awaitable<void> serve(std::shared_ptr<net::Connection> conn) {
    try {
      const std::string none;
      co_await net::tls_handshake(*conn, true, none, none);
      net::expect<wire::Hello>(co_await net::read_message(*conn), conn->peer());
      const std::uint64_t caps = small_gets ? std::uint64_t{wire::cap_small_files} : 0;
      wire::Message hello_ok = wire::HelloOk{wire::protocol_version, caps, "hostile/1", wire::max_block_size};
      co_await net::send_message(*conn, hello_ok);
      net::expect<wire::Auth>(co_await net::read_message(*conn), conn->peer());
      wire::Message auth_ok = wire::AuthOk{"anonymous", wire::right_read};
      co_await net::send_message(*conn, auth_ok);
      for (;;) {
        wire::Message request = co_await net::read_message(*conn);
        wire::Message reply = wire::ErrorMsg{static_cast<std::uint16_t>(Errc::permission), "refused"};
        if (std::holds_alternative<wire::List>(request)) {
          reply = wire::Listing{0, listing};
          ++lists;
        } else if (auto* get = std::get_if<wire::GetSmall>(&request); get && small_gets) {
          wire::GetSmallOk ok;
          ok.id = get->id;
          ok.size = small_data.size();
          ok.value = small_value;
          ok.data = wire::Blob(small_data);
          reply = std::move(ok);
        }
        co_await net::send_message(*conn, reply);
      }
    } catch (const std::exception&) {
      // the client went away
    }
  }

  std::vector<wire::ListEntry> listing;
  server::ServerIdentity identity;
  net::TlsContextPtr tls;
  asio::io_context ioc;
  tcp::acceptor acceptor;
  std::thread thread;
  std::atomic<unsigned> lists{0};
  std::vector<std::uint8_t> small_data;  // set before small_gets
  std::string small_value;
  std::atomic<bool> small_gets{false};
};

HostileServer::HostileServer(const std::string& state_dir, std::vector<wire::ListEntry> listing)
    : impl_(std::make_unique<Impl>(state_dir, std::move(listing))) {}
HostileServer::~HostileServer() = default;

std::uint16_t HostileServer::port() const { return impl_->acceptor.local_endpoint().port(); }
std::string HostileServer::url(const std::string& path) const {
  return "pxfer://127.0.0.1:" + std::to_string(port()) + "/" + path;
}
const std::string& HostileServer::fingerprint() const { return impl_->identity.fingerprint; }
unsigned HostileServer::lists_answered() const { return impl_->lists.load(); }
void HostileServer::answer_small_gets(std::vector<std::uint8_t> data, std::string value) {
  impl_->small_data = std::move(data);
  impl_->small_value = std::move(value);
  impl_->small_gets = true;
}

wire::ListEntry listed_file(const std::string& path, std::uint64_t size) {
  wire::ListEntry e;
  e.kind = wire::EntryKind::file;
  e.size = size;
  e.mode = 0644;
  e.relative_path = path;
  return e;
}

wire::ListEntry listed_directory(const std::string& path) {
  wire::ListEntry e;
  e.kind = wire::EntryKind::directory;
  e.mode = 0755;
  e.relative_path = path;
  return e;
}

}  // namespace pxfer::e2e
