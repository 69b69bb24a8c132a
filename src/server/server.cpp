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
#include <cerrno>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <utility>

#include "net/frame_io.hpp"
#include "net/race.hpp"
#include "net/tls.hpp"
#include <sys/socket.h>
#include <set>
#include "pxfer/error.hpp"
#include "pxfer/file_io.hpp"
#include "pxfer/host_settings.hpp"
#include "pxfer/rate_meter.hpp"
#include "io/tree.hpp"
#include "transfer/transfer.hpp"
#include "admission.hpp"
#include "auth.hpp"
#include "auth_tables.hpp"
#include "metrics.hpp"
#include "pxfer/version.hpp"
#include "identity.hpp"
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
  RatePacer disk_pacer{static_cast<double>(options.emulate_disk_rate)};  // --emulate-disk-rate
  Directory root;
  asio::io_context ioc;
  tcp::acceptor acceptor{ioc};
  server::TransferRegistry registry;
  std::shared_ptr<server::Admission> admission;
  std::atomic<bool> stopping{false};
  std::mutex connections_mutex;
  std::vector<std::weak_ptr<Connection>> connections;  // to close on stop
  asio::signal_set signals{ioc};
  // Security: the TLS context, who may connect, and what each identity may touch.
  server::ServerIdentity identity;
  net::TlsContextPtr tls;
  server::AuthTables auth_files;  // tokens and access files, swapped whole by reload()
  server::Metrics metrics;        // --metrics-listen (metrics.hpp)
  std::mutex encrypted_mutex;
  std::set<wire::Token> encrypted;  // transfers whose data streams must use TLS (--encrypt)

  explicit Impl(ServerOptions opt)
      : options(std::move(opt)),
        root(Directory::open_root(options.root, true)),
        admission(std::make_shared<server::Admission>(server::AdmissionLimits{
            options.max_active, options.max_streams_per_client, options.max_clients, options.max_starts_per_second})) {
    auth_files.set(server::AuthFiles::load(options.tokens_file, options.access_file));
    identity = server::load_or_create_identity(options.cert_file, options.key_file, options.state_dir);
    tls = net::make_server_tls(net::ServerTlsConfig{identity.cert_file, identity.key_file, options.client_ca_file});
  }

  // What a control session may do, decided once after HELLO.
  struct Session {
    std::string identity;
    std::vector<server::Grant> grants;
  };

  // Refuses to serve without client authentication, except anonymous on loopback when asked.
  void check_auth_policy(const asio::ip::address& address) const {
    bool any = !options.tokens_file.empty() || !options.client_ca_file.empty() || options.anonymous_read;
    if (options.insecure_no_auth && !address.is_loopback())
      throw Error(Errc::usage, "--insecure-no-auth is only allowed on a loopback address (127.0.0.1 or [::1]); "
                               "give --tokens FILE or --client-ca FILE to listen on " + address.to_string());
    if (!any && !options.insecure_no_auth)
      throw Error(Errc::usage, "no client authentication configured: give --tokens FILE (create one with "
                               "`pxferd token create NAME --tokens FILE`), --client-ca FILE, or --anonymous-read; "
                               "--insecure-no-auth allows anonymous read-write on a loopback address only");
  }

  Session session_for(const std::string& name, bool anonymous) const {
    Session s{name, {}};
    if (auto files = auth_files.get(); files->access) {
      s.grants = files->access->grants_of(name);
      if (anonymous && !options.insecure_no_auth)
        for (auto& g : s.grants) g.write = false;
      if (s.grants.empty() && anonymous && !options.insecure_no_auth) s.grants.push_back(server::Grant{"", false});
    } else {
      s.grants.push_back(server::Grant{"", !anonymous || options.insecure_no_auth});
    }
    if (s.grants.empty())
      throw Error(Errc::permission, "identity " + name + " has no access on this server (not in its access file)");
    return s;
  }

  // Who the client is: a verified client certificate, else a token, else anonymous if allowed.
  Session authenticate(const Connection& conn, const wire::Auth& auth) const {
    const net::TlsInfo* t = conn.tls();
    if (t && !t->peer_fingerprint.empty() && !options.client_ca_file.empty()) {
      if (!t->peer_verified)
        throw Error(Errc::permission, "client certificate refused: " + t->verify_error +
                                          " (it is not signed by the server's --client-ca)");
      if (!server::valid_identity_name(t->peer_cn))
        throw Error(Errc::permission, "client certificate refused: its subject CN is not a valid identity name");
      spdlog::debug("client={} identity={} authenticated by certificate {}", conn.peer(), t->peer_cn, t->peer_fingerprint);
      return session_for(t->peer_cn, false);
    }
    if (!auth.token.empty()) {
      std::optional<std::string> name;
      if (auto files = auth_files.get(); files->tokens) name = files->tokens->identify(auth.token);
      if (!name) {
        spdlog::warn("client={} authentication failed: unknown token ({})", conn.peer(), server::log_safe_token_id(auth.token));
        throw Error(Errc::permission, "authentication failed: the token is not valid on this server "
                                      "(check --token-file or PXFER_TOKEN)");
      }
      spdlog::debug("client={} identity={} authenticated by token", conn.peer(), *name);
      return session_for(*name, false);
    }
    if (options.insecure_no_auth || options.anonymous_read) return session_for("anonymous", true);
    spdlog::warn("client={} refused: no credentials", conn.peer());
    throw Error(Errc::permission, "authentication required: give a token (--token-file FILE or the PXFER_TOKEN "
                                  "variable) or a client certificate (--cert FILE --key FILE)");
  }

  static std::optional<Error> authorize(const Session& s, const std::string& path, bool write) {
    if (server::allowed(s.grants, path, write)) return std::nullopt;
    // A path with "..": with rights over the whole root, confinement to the root decides (and
    // says why); with narrower grants it could climb out of one, so it is refused here.
    if (!server::normalize_request_path(path)) {
      if (server::allowed(s.grants, "", write)) return std::nullopt;
      return Error(Errc::permission, path + ": refused: '..' is not allowed in paths on this server");
    }
    return Error(Errc::permission, "identity " + s.identity + " may not " + (write ? "write " : "read ") +
                                       (path.empty() ? "/" : path) + " on this server" +
                                       (write && server::allowed(s.grants, path, false) ? " (read-only access)" : ""));
  }

  bool requires_encryption(const wire::Token& token) {
    std::lock_guard lock(encrypted_mutex);
    return encrypted.count(token) > 0;
  }

  void bind() {
    boost::system::error_code ec;
    auto address = asio::ip::make_address(options.listen.host.empty() ? "::" : options.listen.host, ec);
    if (ec) throw Error(Errc::usage, "--listen " + options.listen.host + ": not an IP address (use e.g. 127.0.0.1 or [::1])");
    check_auth_policy(address);
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

  // Open connections per source address and in total (--max-connections, and -per-address).
  struct ConnectionCount {
    std::mutex mutex;
    unsigned total = 0;
    std::unordered_map<std::string, unsigned> per_address;
    std::unordered_map<std::string, Clock::time_point> refusal_logged;  // once a minute per address
  };
  ConnectionCount counts;

  // Held by each accepted connection's coroutine for its whole life.
  class CountedConnection {
   public:
    CountedConnection(ConnectionCount& c, std::string address) : c_(&c), address_(std::move(address)) {}
    CountedConnection(CountedConnection&& o) noexcept : c_(std::exchange(o.c_, nullptr)), address_(std::move(o.address_)) {}
    CountedConnection& operator=(CountedConnection&&) = delete;
    ~CountedConnection() {
      if (!c_) return;
      std::lock_guard lock(c_->mutex);
      --c_->total;
      auto it = c_->per_address.find(address_);
      if (it != c_->per_address.end() && --it->second == 0) c_->per_address.erase(it);
    }

   private:
    ConnectionCount* c_;
    std::string address_;
  };

  // Counts the connection in, or says why it is refused ("" = admitted).
  std::string admit_connection(const std::string& address) {
    std::lock_guard lock(counts.mutex);
    unsigned& mine = counts.per_address[address];
    std::string why;
    if (options.max_connections > 0 && counts.total >= options.max_connections)
      why = "--max-connections " + std::to_string(options.max_connections) + " reached";
    else if (options.max_connections_per_address > 0 && mine >= options.max_connections_per_address)
      why = "--max-connections-per-address " + std::to_string(options.max_connections_per_address) + " reached";
    if (why.empty()) {
      ++counts.total;
      ++mine;
      return why;
    }
    if (mine == 0) counts.per_address.erase(address);
    auto now = Clock::now();
    auto [it, first] = counts.refusal_logged.try_emplace(address, now);
    if (first || now - it->second >= std::chrono::minutes(1)) {
      it->second = now;
      if (counts.refusal_logged.size() > 10000) counts.refusal_logged.clear();  // bounded memory
      spdlog::warn("client={} connection refused: {} (logged once a minute per address)", address, why);
    }
    return why;
  }

  awaitable<void> accept_loop() {
    for (;;) {
      tcp::socket socket(asio::make_strand(ioc));
      auto [ec] = co_await acceptor.async_accept(socket, use_tuple);
      if (ec) {
        if (stopping || ec == asio::error::operation_aborted) co_return;
        spdlog::warn("accept failed: {}", ec.message());
        // Out of descriptors (EMFILE/ENFILE) or memory: pause instead of spinning on the error.
        asio::steady_timer pause(acceptor.get_executor(), std::chrono::milliseconds(100));
        co_await pause.async_wait(use_tuple);
        continue;
      }
      boost::system::error_code peer_ec;
      auto peer = socket.remote_endpoint(peer_ec);
      std::string address = peer_ec ? std::string("?") : peer.address().to_string();
      if (!admit_connection(address).empty()) {
        socket.close(peer_ec);
        continue;
      }
      CountedConnection counted(counts, std::move(address));
      auto ex = socket.get_executor();
      asio::co_spawn(ex, serve_counted(std::move(counted), net::make_tcp_connection(std::move(socket))), asio::detached);
    }
  }

  // `counted` lives in this coroutine's frame: the connection counts until serve_socket returns.
  awaitable<void> serve_counted([[maybe_unused]] CountedConnection counted, std::shared_ptr<Connection> plain) {
    co_await serve_socket(std::move(plain));
  }

  // The first byte tells TLS (a handshake record, 0x16) from a clear pxfer frame (a big-endian
  // length, whose first byte is 0 for every frame within the limits): control connections and
  // --encrypt data streams speak TLS, other data streams attach in the clear.
  // A readiness wake-up is not a promise of data (the reactor may report a stale edge): EAGAIN
  // means wait again, not "the peer went away" (that silently dropped about 1 connection in 2000
  // under many concurrent small-file transfers: the client saw "TLS handshake ... truncated").
  static awaitable<int> peek_first_byte(tcp::socket& socket) {
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

  static awaitable<void> sleep_for(std::chrono::milliseconds d) {
    asio::steady_timer timer(co_await asio::this_coro::executor, d);
    co_await timer.async_wait(asio::use_awaitable);
  }

  awaitable<void> serve_socket(std::shared_ptr<Connection> plain) {
    track(plain);
    std::shared_ptr<Connection> conn = plain;
    try {
      auto first = co_await net::first_of(peek_first_byte(plain->socket()), sleep_for(options.hello_timeout));
      if (!first || *first < 0 || stopping) {
        plain->close();
        co_return;
      }
      if (*first == 0x16) {
        conn = net::make_tls_connection(std::move(plain->socket()), tls);
        track(conn);
        const std::string none;
        co_await net::tls_handshake(*conn, true, none, none);
      }
    } catch (const Error& e) {
      spdlog::debug("{}: {}", conn->peer(), e.what());
      ++metrics.tls_handshake_failures;
      conn->close();
      co_return;
    }
    co_await serve_connection(conn);
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
        if (conn->tls()) {
          co_await control_session(conn, *hello);
        } else {
          Error clear(Errc::protocol, "control connections must use TLS 1.3; this client is too old for this server");
          co_await net::send_error_quietly(*conn, clear);
        }
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
    const std::uint64_t reply_caps = hello.capabilities & wire::our_capabilities;
    wire::Message reply = wire::HelloOk{wire::protocol_version, reply_caps, server_agent, wire::max_block_size};
    co_await net::send_message(*conn, reply);
    spdlog::debug("client={} agent={}", conn->peer(), hello.agent);
    // Credentials next: AUTH, checked against the client certificate, the tokens and the policy.
    std::optional<Session> session;
    std::optional<Error> auth_refused;
    {
      auto first = co_await net::read_message_within(*conn, options.hello_timeout);
      if (!first) co_return;
      wire::Message auth_message = std::move(*first);
      try {
        session = authenticate(*conn, net::expect<wire::Auth>(std::move(auth_message), conn->peer()));
      } catch (const Error& e) {
        auth_refused = e;
        ++metrics.auth_failures;
      }
    }
    if (auth_refused) {
      co_await net::send_error_quietly(*conn, *auth_refused);
      co_return;
    }
    std::uint8_t rights = 0;
    for (const auto& g : session->grants) rights |= g.write ? (wire::right_read | wire::right_write) : wire::right_read;
    wire::Message auth_ok = wire::AuthOk{session->identity, rights};
    co_await net::send_message(*conn, auth_ok);
    for (;;) {
      auto next = co_await net::read_message_within(*conn, options.idle_timeout);
      if (!next) {
        spdlog::info("client={} identity={} idle for {}s, control session closed", conn->peer(), session->identity,
                     std::chrono::duration_cast<std::chrono::seconds>(options.idle_timeout).count());
        co_return;
      }
      wire::Message message = std::move(*next);
      std::optional<Error> denied;
      if (auto* o = std::get_if<wire::Open>(&message)) denied = authorize(*session, o->path, o->direction == wire::Direction::put);
      else if (auto* r = std::get_if<wire::Remove>(&message)) denied = authorize(*session, r->path, true);
      else if (auto* m = std::get_if<wire::Mkdir>(&message)) denied = authorize(*session, m->path, true);
      else if (auto* l = std::get_if<wire::List>(&message)) denied = authorize(*session, l->path, false);
      else if (auto* q = std::get_if<wire::Sum>(&message)) denied = authorize(*session, q->path, false);
      else if (auto* a = std::get_if<wire::SetAttributes>(&message)) denied = authorize(*session, a->path, true);
      if (denied) {
        spdlog::info("client={} identity={} refused: {}", conn->peer(), session->identity, denied->what());
        wire::Message answer = done_or_error(denied);
        co_await net::send_message(*conn, answer);
        continue;
      }
      if (auto* open = std::get_if<wire::Open>(&message)) {
        co_await serve_transfer(conn, *open, reply_caps);
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
      } else if (auto* sum = std::get_if<wire::Sum>(&message)) {
        FileSum result;
        auto refused = attempt([&] { result = sum_file(root, sum->path, static_cast<ChecksumAlgo>(sum->checksum), sum->size); });
        wire::Message answer = refused ? done_or_error(refused) : wire::Message(wire::SumOk{result.size, result.value});
        co_await net::send_message(*conn, answer);
      } else if (auto* attributes = std::get_if<wire::SetAttributes>(&message)) {
        auto refused = attempt([&] { set_file_attributes(root, attributes->path, attributes->mode, attributes->mtime_ns); });
        wire::Message answer = done_or_error(refused);
        co_await net::send_message(*conn, answer);
      } else if (std::holds_alternative<wire::InfoRequest>(message)) {
        wire::Message info = wire::Info{info_entries(*conn)};
        co_await net::send_message(*conn, info);
      } else {
        throw Error(Errc::protocol, std::string("unexpected ") + wire::type_name(wire::type_of(message)));
      }
    }
  }

  // Opens the file the client named; errors become an ERROR frame and the session goes on.
  std::shared_ptr<transfer::Transfer> open_transfer(wire::Open& open, std::uint64_t caps, asio::any_io_executor ex) {
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
    // The client's stall timeout, within sane bounds: heartbeats go four times per period.
    if (open.stall_timeout_ms > 0)
      settings.stall_timeout = std::chrono::milliseconds(std::clamp<std::uint32_t>(open.stall_timeout_ms, 400, 3'600'000));
    if (open.direction == wire::Direction::get) {
      FileSource source(root, open.path);
      // No more streams than blocks (a small file needs one connection), when the client takes
      // the granted count from OPEN_OK; the client caps a put itself, knowing the size.
      if (caps & wire::cap_admission) {
        const std::uint64_t blocks = (source.size() + open.block_size - 1) / open.block_size;
        open.streams = static_cast<std::uint16_t>(std::clamp<std::uint64_t>(blocks, 1, open.streams));
        settings.streams = open.streams;
      }
      return transfer::Transfer::sending(ex, std::move(source), settings);
    }
    SinkOptions sink_options{(open.flags & wire::open_overwrite) != 0, (open.flags & wire::open_no_resume) == 0,
                             (open.flags & wire::open_sync) != 0, open.block_size, open.mtime_ns,
                             options.partial_max_age.count(), options.emulate_disk_rate > 0 ? &disk_pacer : nullptr};
    auto sink = std::make_unique<FileSink>(root, open.path, open.size, sink_options);
    return transfer::Transfer::receiving(ex, std::move(sink), settings);
  }

  // The client as admission control counts it: its address (an IPv4-mapped IPv6 address as IPv4).
  static std::string client_address(Connection& conn) {
    boost::system::error_code ec;
    auto ep = conn.socket().remote_endpoint(ec);
    if (ec) return conn.peer();
    auto address = ep.address();
    if (address.is_v6() && address.to_v6().is_v4_mapped())
      address = asio::ip::make_address_v4(asio::ip::v4_mapped, address.to_v6());
    return address.to_string();
  }

  // INFO (pxfer doctor): the host's TCP settings and the server's load.
  std::vector<std::pair<std::string, std::string>> info_entries(Connection& conn) {
    auto entries = to_entries(read_host_settings(conn.socket().native_handle()));
    auto load = admission->load();
    entries.emplace_back("active", std::to_string(load.active));
    entries.emplace_back("queued", std::to_string(load.queued));
    entries.emplace_back("max_active", std::to_string(load.max_active));
    entries.emplace_back("max_streams_per_client", std::to_string(options.max_streams_per_client));
    entries.emplace_back("clients", std::to_string(load.clients));
    entries.emplace_back("client_streams", std::to_string(admission->streams_of(client_address(conn))));
    return entries;
  }

  // OPEN_OK, with the granted stream count and the server's load for a client that understands them.
  wire::Message open_ok_for(const wire::Token& token, const transfer::Transfer& t, const wire::Open& open,
                            std::uint64_t caps) {
    wire::OpenOk ok{token, t.file_size(), open.block_size, t.source_mtime_ns()};
    if (caps & wire::cap_admission) {
      auto load = admission->load();
      ok.has_admission = true;
      ok.streams = open.streams;
      ok.active = load.active;
      ok.queued = load.queued;
      ok.max_active = load.max_active;
    }
    return ok;
  }

  // Waits for an admission slot, telling the client its place in line (QUEUED frames). Lowers
  // open.streams to what was granted (--max-streams-per-client) when the client can take fewer.
  awaitable<std::unique_ptr<server::Admission::Slot>> wait_for_slot(std::shared_ptr<Connection> conn, wire::Open& open,
                                                                     std::uint64_t caps) {
    const auto queued_at = Clock::now();
    const std::string client = client_address(*conn);
    // Named, not a temporary in the co_await below: g++ 12 mishandles those.
    server::Admission::OnWait tell_client = [conn, path = open.path](server::QueueState s) -> awaitable<void> {
      spdlog::info("client={} path={} queued position={} active={} queued={}", conn->peer(), path, s.position, s.active,
                   s.queued);
      wire::Message queued = wire::Queued{s.position, s.active, s.queued};
      co_await net::send_message(*conn, queued);
    };
    server::AdmissionPolicy::Request request{client, open.streams, (caps & wire::cap_admission) != 0};
    auto slot = co_await admission->admit(request, options.queue_timeout, tell_client);
    const unsigned asked = open.streams;
    open.streams = static_cast<std::uint16_t>(slot->streams());
    double waited = std::chrono::duration<double>(Clock::now() - queued_at).count();
    // One info line per transfer is the rule; an admission is only news when the transfer waited
    // or was granted fewer streams than it asked for.
    spdlog::log(waited > 0.001 || asked != open.streams ? spdlog::level::info : spdlog::level::debug,
                "client={} path={} admitted active={} max_active={} waited={:.2f}s streams={} asked={} client_streams={}",
                conn->peer(), open.path, admission->active(), admission->max_active(), waited, open.streams, asked,
                admission->streams_of(client));
    co_return slot;
  }

  awaitable<void> serve_transfer(std::shared_ptr<Connection> conn, wire::Open& open, std::uint64_t caps) {
    const char* direction = open.direction == wire::Direction::put ? "put" : "get";
    std::shared_ptr<transfer::Transfer> t;
    std::unique_ptr<server::Admission::Slot> slot;
    std::optional<Error> refused;
    try {
      slot = co_await wait_for_slot(conn, open, caps);
    } catch (const Error& e) {
      refused = e;
    }
    if (!refused) try {
        t = open_transfer(open, caps, co_await asio::this_coro::executor);
      } catch (const Error& e) {
        refused = e;
      }
    if (refused) {
      metrics.transfer_ended(open.direction == wire::Direction::put, server::Outcome::refused, 0);
      spdlog::info("client={} path={} direction={} refused: {}", conn->peer(), open.path, direction, refused->what());
      co_await net::send_error_quietly(*conn, *refused);
      co_return;
    }
    auto token = registry.add(t);
    if (open.flags & wire::open_encrypt) {
      std::lock_guard lock(encrypted_mutex);
      encrypted.insert(token);
    }
    t->arm_attach_deadline();
    auto start = Clock::now();
    std::string checksum;
    std::optional<Error> failure;
    try {
      wire::Message open_ok = open_ok_for(token, *t, open, caps);
      co_await net::send_message(*conn, open_ok);
      co_await t->exchange_have(*conn);
      // A one-block file the client asked to move on this connection (streams were capped to 1
      // for it: the client's own count in a put, open_transfer's in a get).
      const bool on_control = (caps & wire::cap_on_control) && (caps & wire::cap_admission) &&
                              wire::moves_on_control(open.flags, t->file_size(), open.block_size);
      checksum = co_await t->run_control(conn, on_control);
    } catch (const Error& e) {
      failure = e;
    }
    registry.remove(token);
    {
      std::lock_guard lock(encrypted_mutex);
      encrypted.erase(token);
    }
    double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    metrics.transfer_ended(open.direction == wire::Direction::put, failure ? server::Outcome::failed : server::Outcome::ok,
                           t->bytes_moved());
    double rate = seconds > 0 ? static_cast<double>(t->bytes_moved()) / seconds / 1e6 : 0;
    std::string sum = format_checksum(t->settings().checksum, checksum);
    if (failure) {
      t->fail(*failure);
      spdlog::warn("client={} path={} direction={} bytes={} seconds={:.3f} streams={} rate={:.1f}MB/s result=failed: {}",
                   conn->peer(), open.path, direction, t->bytes_moved(), seconds, open.streams, rate, failure->what());
      co_await net::send_error_quietly(*conn, *failure);
      throw *failure;  // the control connection is in an unknown state: end the session
    }
    spdlog::info("client={} path={} direction={} bytes={} resumed={} recovered_streams={} seconds={:.3f} streams={} "
                 "rate={:.1f}MB/s {} result=ok",
                 conn->peer(), open.path, direction, t->file_size(), t->resumed_bytes(), t->stream_recoveries(), seconds,
                 open.streams, rate, sum);
  }

  awaitable<void> data_session(std::shared_ptr<Connection> conn, const wire::Attach& attach) {
    if (!conn->tls() && requires_encryption(attach.token)) {
      Error clear(Errc::permission, "this transfer requires TLS on its data streams (--encrypt)");
      co_await net::send_error_quietly(*conn, clear);
      co_return;
    }
    auto t = registry.find(attach.token);
    if (!t || !t->claim_stream(attach.stream, conn)) {
      // Same answer for an unknown token and a finished transfer: nothing to learn by guessing.
      Error refused(Errc::permission, "unknown or expired session token");
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

std::string Server::fingerprint() const { return impl_->identity.fingerprint; }

bool Server::created_identity() const { return impl_->identity.created; }

std::string Server::certificate_file() const { return impl_->identity.cert_file; }

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

std::string Server::metrics_text() const {
  auto load = impl_->admission->load();
  std::unique_lock lock(impl_->counts.mutex);
  server::Gauges gauges{load.active, load.queued, load.max_active, load.clients, impl_->counts.total};
  lock.unlock();
  return server::format_prometheus(impl_->metrics, gauges);
}

void Server::reload(const std::string& tokens_file, const std::string& access_file) {
  server::reload_auth(impl_->auth_files, {impl_->options.tokens_file, impl_->options.access_file}, {tokens_file, access_file});
}

}  // namespace pxfer
