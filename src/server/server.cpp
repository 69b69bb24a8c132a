#include "pxfer/server.hpp"

#include <spdlog/spdlog.h>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <thread>

#include "net/frame_io.hpp"
#include "pxfer/error.hpp"
#include "pxfer/file_io.hpp"
#include "pxfer/host_settings.hpp"
#include "pxfer/rate_meter.hpp"
#include "io/tree.hpp"
#include "transfer/transfer.hpp"
#include "admission.hpp"
#include "transfer_registry.hpp"

namespace pxfer {

namespace asio = boost::asio;
using asio::ip::tcp;
using net::awaitable;
using net::Connection;
constexpr auto use_tuple = asio::as_tuple(asio::use_awaitable);

namespace {
// Runs a request that needs no transfer; its error, if any, is what the client is told (kept out
// of the catch block: no co_await may happen inside a handler).
template <class F>
std::optional<Error> attempt(F&& request) {
  try {
    request();
  } catch (const Error& e) {
    return e;
  }
  return std::nullopt;
}

wire::Message done_or_error(const std::optional<Error>& refused) {
  if (refused) return wire::ErrorMsg{static_cast<std::uint16_t>(refused->code()), refused->what()};
  return wire::Done{};
}

bool has_word(const std::string& list, const std::string& word) {
  std::size_t pos = 0;
  while ((pos = list.find(word, pos)) != std::string::npos) {
    bool starts = pos == 0 || list[pos - 1] == ' ';
    bool ends = pos + word.size() == list.size() || list[pos + word.size()] == ' ';
    if (starts && ends) return true;
    pos += word.size();
  }
  return false;
}
}  // namespace

struct Server::Impl {
  ServerOptions options;
  Directory root;
  asio::io_context ioc;
  tcp::acceptor acceptor{ioc};
  server::TransferRegistry registry;
  std::shared_ptr<server::Admission> admission;
  std::atomic<bool> stopping{false};
  std::mutex connections_mutex;
  std::vector<std::weak_ptr<Connection>> connections;  // to close on stop
  asio::signal_set signals{ioc};

  explicit Impl(ServerOptions opt)
      : options(std::move(opt)),
        root(Directory::open_root(options.root, true)),
        admission(std::make_shared<server::Admission>(options.max_active)) {}

  void bind() {
    boost::system::error_code ec;
    auto address = asio::ip::make_address(options.listen.host.empty() ? "::" : options.listen.host, ec);
    if (ec) throw Error(Errc::usage, "--listen " + options.listen.host + ": not an IP address (use e.g. 127.0.0.1 or [::1])");
    tcp::endpoint ep(address, options.listen.port);
    acceptor.open(ep.protocol(), ec);
    if (!ec) acceptor.set_option(tcp::acceptor::reuse_address(true), ec);
    // The listening socket keeps default buffers, so the window scale offered in every SYN-ACK
    // is sized for autotuning; a pinned -w is applied per accepted data socket instead.
    if (!ec) acceptor.bind(ep, ec);
    if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
    if (ec)
      throw Error(Errc::network, "cannot listen on " + net::endpoint_text(ep) + ": " + ec.message() +
                                     (ec == asio::error::address_in_use ? " (another pxferd running? choose another port)" : ""));
  }

  void track(const std::shared_ptr<Connection>& conn) {
    std::lock_guard lock(connections_mutex);
    std::erase_if(connections, [](const auto& w) { return w.expired(); });
    connections.push_back(conn);
  }

  awaitable<void> accept_loop() {
    for (;;) {
      tcp::socket socket(asio::make_strand(ioc));
      auto [ec] = co_await acceptor.async_accept(socket, use_tuple);
      if (ec) {
        if (stopping || ec == asio::error::operation_aborted) co_return;
        spdlog::warn("accept failed: {}", ec.message());
        continue;
      }
      auto ex = socket.get_executor();
      asio::co_spawn(ex, serve_connection(net::make_tcp_connection(std::move(socket))), asio::detached);
    }
  }

  // The first frame says what a connection is: HELLO opens a control session, ATTACH joins a
  // data stream to its transfer. Anything else, or nothing in time, is dropped.
  awaitable<void> serve_connection(std::shared_ptr<Connection> conn) {
    track(conn);
    try {
      auto first = co_await net::read_message_within(*conn, options.hello_timeout);
      if (!first) {
        spdlog::debug("{}: no HELLO or ATTACH within the deadline, dropped", conn->peer());
        co_return;
      }
      wire::Message message = std::move(*first);
      if (auto* hello = std::get_if<wire::Hello>(&message)) {
        co_await control_session(conn, *hello);
      } else if (auto* attach = std::get_if<wire::Attach>(&message)) {
        co_await data_session(conn, *attach);
      } else {
        Error unexpected(Errc::protocol, "expected HELLO or ATTACH");
        co_await net::send_error_quietly(*conn, unexpected);
      }
    } catch (const Error& e) {
      if (!stopping) spdlog::debug("{}: {}", conn->peer(), e.what());
    } catch (const std::exception& e) {
      spdlog::error("{}: {}", conn->peer(), e.what());
    }
    conn->close();
  }

  awaitable<void> control_session(std::shared_ptr<Connection> conn, const wire::Hello& hello) {
    if (hello.min_version > wire::protocol_version || hello.version < wire::protocol_version) {
      Error unsupported(Errc::protocol, "protocol version " + std::to_string(hello.version) +
                                            " not supported (server speaks " + std::to_string(wire::protocol_version) + ")");
      co_await net::send_error_quietly(*conn, unsupported);
      co_return;
    }
    enable_keepalive(conn->socket().native_handle(), 60);
    wire::Message reply = wire::HelloOk{wire::protocol_version, hello.capabilities & wire::our_capabilities,
                                        "pxferd/0.1", wire::max_block_size};
    co_await net::send_message(*conn, reply);
    for (;;) {
      wire::Message message = co_await net::read_message(*conn);
      if (auto* open = std::get_if<wire::Open>(&message)) {
        co_await serve_transfer(conn, *open);
      } else if (auto* ping = std::get_if<wire::Ping>(&message)) {
        wire::Message pong = wire::Pong{ping->nonce};
        co_await net::send_message(*conn, pong);
      } else if (auto* remove = std::get_if<wire::Remove>(&message)) {
        auto refused = attempt([&] { remove_file(root, remove->path); });
        if (!refused) spdlog::info("client={} path={} removed", conn->peer(), remove->path);
        wire::Message answer = done_or_error(refused);
        co_await net::send_message(*conn, answer);
      } else if (auto* mkdir = std::get_if<wire::Mkdir>(&message)) {
        auto refused = attempt([&] { make_directories(root, mkdir->path); });
        wire::Message answer = done_or_error(refused);
        co_await net::send_message(*conn, answer);
      } else if (auto* list = std::get_if<wire::List>(&message)) {
        std::vector<wire::ListEntry> entries;
        auto refused = attempt([&] { entries = list_tree(root, list->path); });
        if (refused) {
          wire::Message answer = done_or_error(refused);
          co_await net::send_message(*conn, answer);
          continue;
        }
        for (auto& frame : wire::split_listing(std::move(entries))) {
          wire::Message part = std::move(frame);
          co_await net::send_message(*conn, part);
        }
      } else if (std::holds_alternative<wire::InfoRequest>(message)) {
        wire::Message info = wire::Info{to_entries(read_host_settings(conn->socket().native_handle()))};
        co_await net::send_message(*conn, info);
      } else {
        throw Error(Errc::protocol, std::string("unexpected ") + wire::type_name(wire::type_of(message)));
      }
    }
  }

  // Opens the file the client named; errors become an ERROR frame and the session goes on.
  std::shared_ptr<transfer::Transfer> open_transfer(const wire::Open& open, asio::any_io_executor ex) {
    auto algo = static_cast<ChecksumAlgo>(open.checksum);
    if (open.checksum > static_cast<std::uint8_t>(ChecksumAlgo::sha256))
      throw Error(Errc::protocol, "unknown checksum algorithm " + std::to_string(open.checksum));
    if (!open.congestion.empty() && !has_word(available_congestion_controls(), open.congestion))
      throw Error(Errc::usage, "congestion control '" + open.congestion + "' is not available on the server; available: " +
                                   available_congestion_controls());
    transfer::Settings settings{algo, open.block_size, open.streams,
                                SocketTuning{open.window, open.congestion, open.window_clamp}, options.attach_timeout};
    settings.compression = CompressionSetting{static_cast<CompressMode>(open.compress_mode), open.compress_level};
    if (open.flags & wire::open_want_stats)
      settings.stats_interval = std::chrono::milliseconds(std::max<std::uint32_t>(open.stats_interval_ms, 100));
    if (open.direction == wire::Direction::get) return transfer::Transfer::sending(ex, FileSource(root, open.path), settings);
    auto sink = std::make_unique<FileSink>(root, open.path, open.size, (open.flags & wire::open_overwrite) != 0);
    return transfer::Transfer::receiving(ex, std::move(sink), settings);
  }

  // Waits for an admission slot, telling the client its place in line (QUEUED frames).
  awaitable<std::unique_ptr<server::Admission::Slot>> wait_for_slot(std::shared_ptr<Connection> conn,
                                                                     const wire::Open& open) {
    const auto queued_at = Clock::now();
    // Named, not a temporary in the co_await below: g++ 12 mishandles those.
    server::Admission::OnWait tell_client = [conn, path = open.path](server::QueueState s) -> awaitable<void> {
      spdlog::info("client={} path={} queued position={} active={} queued={}", conn->peer(), path, s.position, s.active,
                   s.queued);
      wire::Message queued = wire::Queued{s.position, s.active, s.queued};
      co_await net::send_message(*conn, queued);
    };
    auto slot = co_await admission->admit(options.queue_timeout, tell_client);
    double waited = std::chrono::duration<double>(Clock::now() - queued_at).count();
    // One info line per transfer is the rule; an admission is only news when the transfer waited.
    spdlog::log(waited > 0.001 ? spdlog::level::info : spdlog::level::debug,
                "client={} path={} admitted active={} max_active={} waited={:.2f}s", conn->peer(), open.path,
                admission->active(), admission->max_active(), waited);
    co_return slot;
  }

  awaitable<void> serve_transfer(std::shared_ptr<Connection> conn, const wire::Open& open) {
    const char* direction = open.direction == wire::Direction::put ? "put" : "get";
    std::shared_ptr<transfer::Transfer> t;
    std::unique_ptr<server::Admission::Slot> slot;
    std::optional<Error> refused;
    try {
      slot = co_await wait_for_slot(conn, open);
    } catch (const Error& e) {
      refused = e;
    }
    if (!refused) try {
        t = open_transfer(open, co_await asio::this_coro::executor);
      } catch (const Error& e) {
        refused = e;
      }
    if (refused) {
      spdlog::info("client={} path={} direction={} refused: {}", conn->peer(), open.path, direction, refused->what());
      co_await net::send_error_quietly(*conn, *refused);
      co_return;
    }
    auto token = registry.add(t);
    t->arm_attach_deadline();
    auto start = Clock::now();
    std::string checksum;
    std::optional<Error> failure;
    try {
      wire::Message open_ok = wire::OpenOk{token, t->file_size(), open.block_size};
      co_await net::send_message(*conn, open_ok);
      checksum = co_await t->run_control(*conn);
    } catch (const Error& e) {
      failure = e;
    }
    registry.remove(token);
    double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    double rate = seconds > 0 ? static_cast<double>(t->bytes_moved()) / seconds / 1e6 : 0;
    std::string sum = format_checksum(t->settings().checksum, checksum);
    if (failure) {
      t->fail(*failure);
      spdlog::warn("client={} path={} direction={} bytes={} seconds={:.3f} streams={} rate={:.1f}MB/s result=failed: {}",
                   conn->peer(), open.path, direction, t->bytes_moved(), seconds, open.streams, rate, failure->what());
      co_await net::send_error_quietly(*conn, *failure);
      throw *failure;  // the control connection is in an unknown state: end the session
    }
    spdlog::info("client={} path={} direction={} bytes={} seconds={:.3f} streams={} rate={:.1f}MB/s {} result=ok",
                 conn->peer(), open.path, direction, t->file_size(), seconds, open.streams, rate, sum);
  }

  awaitable<void> data_session(std::shared_ptr<Connection> conn, const wire::Attach& attach) {
    auto t = registry.find(attach.token);
    if (!t || !t->claim_stream(attach.stream)) {
      // Same answer for an unknown token and a taken slot: nothing to learn by guessing.
      Error refused(Errc::permission, "unknown or used session token");
      co_await net::send_error_quietly(*conn, refused);
      co_return;
    }
    auto& stats = t->stream(attach.stream);
    stats.local = tune_socket(conn->socket().native_handle(), t->settings().tuning);
    wire::Message attach_ok = wire::AttachOk{stats.local.sndbuf, stats.local.rcvbuf};
    co_await net::send_message(*conn, attach_ok);
    co_await t->run_stream(conn, attach.stream);
  }

  void stop() {
    if (stopping.exchange(true)) return;
    asio::post(ioc, [this] {
      boost::system::error_code ignored;
      acceptor.close(ignored);
      signals.cancel(ignored);
      for (auto& t : registry.all()) t->fail(Error(Errc::network, "the server is shutting down; retry later"));
      std::lock_guard lock(connections_mutex);
      for (auto& w : connections)
        if (auto c = w.lock()) c->close();
    });
  }
};

Server::Server(ServerOptions options) : impl_(std::make_unique<Impl>(std::move(options))) { impl_->bind(); }

Server::~Server() = default;

std::uint16_t Server::port() const { return impl_->acceptor.local_endpoint().port(); }

std::string Server::listen_address() const { return net::endpoint_text(impl_->acceptor.local_endpoint()); }

void Server::run() {
  if (impl_->options.handle_signals) {
    impl_->signals.add(SIGINT);
    impl_->signals.add(SIGTERM);
    impl_->signals.async_wait([this](const boost::system::error_code& ec, int signo) {
      if (ec) return;
      spdlog::info("signal {} received: stopping, transfers in progress are aborted", signo);
      stop();
    });
  }
  asio::co_spawn(impl_->ioc, impl_->accept_loop(), asio::detached);
  unsigned threads = impl_->options.threads ? impl_->options.threads : std::max(1u, std::thread::hardware_concurrency());
  std::vector<std::thread> workers;
  for (unsigned i = 1; i < threads; ++i) workers.emplace_back([this] { impl_->ioc.run(); });
  // Once stop() ran and every connection closed, the loops run dry and run() returns.
  impl_->ioc.run();
  for (auto& w : workers) w.join();
}

void Server::stop() { impl_->stop(); }

}  // namespace pxfer
