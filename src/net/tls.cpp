#include "tls.hpp"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <sys/socket.h>
#include <unistd.h>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <vector>

#include "grid_x509.hpp"
#include "pxfer/common/error.hpp"
#include "race.hpp"
#include "tls_engine.hpp"

namespace pxfer::net {

namespace ssl = asio::ssl;

class TlsContext {
 public:
  explicit TlsContext(ssl::context::method method) : ctx(method) {}
  ssl::context ctx;
  bool verify_chain = false;  // client: --ca given; server: --client-ca or --x509-ca-dir given
  bool grid = false;          // server: --x509-ca-dir (proxies allowed, CRLs, the DN names the user)
};

namespace {


constexpr std::chrono::seconds handshake_timeout{10};  // docs/security.md

std::string hex(const unsigned char* p, unsigned n) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  out.reserve(n * 2);
  for (unsigned i = 0; i < n; ++i) {
    out += digits[p[i] >> 4];
    out += digits[p[i] & 15];
  }
  return out;
}

std::string fingerprint_of(X509* cert) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned n = 0;
  if (X509_digest(cert, EVP_sha256(), md, &n) != 1) return "";
  return "sha256:" + hex(md, n);
}

std::string common_name(X509* cert) {
  char buf[256] = {};
  int n = X509_NAME_get_text_by_NID(X509_get_subject_name(cert), NID_commonName, buf, sizeof buf);
  return n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : std::string();
}

// The last OpenSSL error, as text, for a message about a file we could not use.
std::string openssl_reason() {
  unsigned long e = ERR_peek_last_error();
  ERR_clear_error();
  if (!e) return "unknown reason";
  const char* r = ERR_reason_error_string(e);
  return r ? r : "unknown reason";
}

void tls13_only(ssl::context& ctx) {
  SSL_CTX_set_min_proto_version(ctx.native_handle(), TLS1_3_VERSION);
  SSL_CTX_set_options(ctx.native_handle(), SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION);
}

void load(ssl::context& ctx, const std::string& cert, const std::string& key, const char* what) {
  if (SSL_CTX_use_certificate_chain_file(ctx.native_handle(), cert.c_str()) != 1)
    throw Error(Errc::usage, std::string("cannot use ") + what + " certificate " + cert + ": " + openssl_reason());
  if (SSL_CTX_use_PrivateKey_file(ctx.native_handle(), key.c_str(), SSL_FILETYPE_PEM) != 1)
    throw Error(Errc::usage, std::string("cannot use ") + what + " key " + key + ": " + openssl_reason() +
                                 " (is it readable and in PEM format?)");
  if (SSL_CTX_check_private_key(ctx.native_handle()) != 1)
    throw Error(Errc::usage, std::string(what) + " key " + key + " does not match the certificate " + cert);
}

// Where a server-side TLS connection wants the verdict on its client's chain (SSL ex_data).
int verdict_slot() {
  static const int index = SSL_get_ex_new_index(0, nullptr, nullptr, nullptr, nullptr);
  return index;
}

// Replaces OpenSSL's chain check on the server: the client's certificate is judged (grid rules
// with --x509-ca-dir, plain X509_verify_cert with --client-ca) and the verdict stored for AUTH,
// whose ERROR frame then says why; the handshake itself always goes on.
int judge_client_chain(X509_STORE_CTX* ctx, void* grid) {
  auto* ssl = static_cast<SSL*>(X509_STORE_CTX_get_ex_data(ctx, SSL_get_ex_data_X509_STORE_CTX_idx()));
  auto* out = ssl ? static_cast<ChainVerdict*>(SSL_get_ex_data(ssl, verdict_slot())) : nullptr;
  ChainVerdict v;
  if (grid) {
    v = verify_grid_chain(ctx);
  } else if (X509_verify_cert(ctx) == 1) {
    v.verified = true;
  } else {
    v.error = X509_verify_cert_error_string(X509_STORE_CTX_get_error(ctx));
  }
  if (out) *out = std::move(v);
  return 1;
}

std::string chain_pem(SSL* s, X509* leaf) {
  std::unique_ptr<BIO, decltype(&BIO_free)> bio(BIO_new(BIO_s_mem()), BIO_free);
  PEM_write_bio_X509(bio.get(), leaf);
  STACK_OF(X509)* rest = SSL_get_peer_cert_chain(s);  // on a server: without the leaf
  for (int i = 0; rest && i < sk_X509_num(rest); ++i) PEM_write_bio_X509(bio.get(), sk_X509_value(rest, i));
  char* data = nullptr;
  long n = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<std::size_t>(n));
}

bool is_ip_address(const std::string& host) {
  boost::system::error_code ec;
  asio::ip::make_address(host, ec);
  return !ec;
}

class TlsConnection final : public Connection {
 public:
  TlsConnection(tcp::socket socket, TlsContextPtr context)
      : context_(std::move(context)), engine_(std::move(socket), context_->ctx.native_handle()) {
    gate_ = std::make_unique<WriteGate>(engine_.socket().get_executor());
    boost::system::error_code ec;
    auto ep = engine_.socket().remote_endpoint(ec);
    peer_ = ec ? "unknown peer" : endpoint_text(ep);
    engine_.socket().set_option(tcp::no_delay(true), ec);
    SSL_set_ex_data(engine_.native(), verdict_slot(), &verdict_);
  }

  awaitable<void> handshake(bool server, const std::string& host, const std::string& authority) {
    SSL* s = engine_.native();
    if (!server && context_->verify_chain && !host.empty()) {
      if (is_ip_address(host)) {
        X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(s), host.c_str());
      } else {
        SSL_set1_host(s, host.c_str());
        SSL_set_tlsext_host_name(s, host.c_str());
      }
    }
    auto self = shared_from_this();
    auto ec = co_await engine_.handshake(server);
    if (ec) {
      long verify = SSL_get_verify_result(s);
      if (!server && context_->verify_chain && verify != X509_V_OK)
        throw Error(Errc::permission, "the certificate of " + authority + " does not verify against --ca: " +
                                          X509_verify_cert_error_string(verify) +
                                          " (wrong --ca file, or the server name does not match its certificate?)");
      const std::string who = authority.empty() ? peer_ : authority;
      // No ServerHello came: whatever listens there closed, reset, or answered with bytes that
      // are not TLS (an HTTP or SSH server, pxferd's metrics port). It is not a pxfer server.
      if (!server && SSL_get_state(s) == TLS_ST_CW_CLNT_HELLO) {
        const bool hung_up = ec == asio::error::eof || ec == asio::error::connection_reset || ec == ssl::error::stream_truncated;
        throw Error(Errc::protocol, who + " is not a pxfer server: it " +
                                        (hung_up ? "closed the connection at" : "answered with bytes that are not TLS to") +
                                        " pxfer's TLS hello; check the host and port (pxferd's default port is 7521)" +
                                        (hung_up ? ", or the server is at its --max-connections" : ""));
      }
      throw Error(Errc::network, "TLS handshake with " + who + " failed: " + ec.message());
    }
    info_.version = SSL_get_version(s);
    info_.cipher = SSL_get_cipher_name(s);
    if (X509* cert = SSL_get1_peer_certificate(s)) {
      info_.peer_fingerprint = fingerprint_of(cert);
      info_.peer_cn = common_name(cert);
      if (server) {
        info_.peer_verified = context_->verify_chain && verdict_.verified;
        if (context_->verify_chain && !verdict_.verified) info_.verify_error = verdict_.error;
        if (context_->grid) {
          info_.peer_dn = verdict_.dn;
          info_.peer_proxies = verdict_.proxies;
          info_.peer_chain_pem = chain_pem(s, cert);
        }
      } else {
        long verify = SSL_get_verify_result(s);
        info_.peer_verified = context_->verify_chain && verify == X509_V_OK;
        if (context_->verify_chain && verify != X509_V_OK) info_.verify_error = X509_verify_cert_error_string(verify);
      }
      X509_free(cert);
    }
  }

  awaitable<std::size_t> read_some(std::span<std::uint8_t> out) override {
    auto [ec, n] = co_await engine_.read_some(out);
    if (ec) throw lost(ec);
    co_return n;
  }

  awaitable<void> read_exact(std::span<std::uint8_t> out, std::atomic<std::uint64_t>* progress) override {
    for (std::size_t done = 0; done < out.size();) {
      auto [ec, n] = co_await engine_.read_some(out.subspan(done));
      if (ec) throw lost(ec);
      done += n;
      if (progress) progress->fetch_add(n, std::memory_order_relaxed);
    }
  }

  // A message's records leave in sends of up to TlsEngine::chunk bytes.
  awaitable<void> write_all(std::span<const std::uint8_t> data, std::atomic<std::uint64_t>* progress) override {
    const std::array<std::span<const std::uint8_t>, 1> parts{data};
    auto ec = co_await engine_.write(parts, progress);
    if (ec) throw lost(ec);
  }

  // Each part is encrypted where it lies; the records of all of them leave together.
  awaitable<void> write_parts(std::span<const std::span<const std::uint8_t>> parts) override {
    auto ec = co_await engine_.write(parts, nullptr);
    if (ec) throw lost(ec);
  }

  // No close_notify: every pxfer exchange ends with its own message, so a plain close loses nothing
  // and never waits on a peer that stopped reading.
  void close() override {
    asio::post(engine_.socket().get_executor(), [self = shared_from_this(), this] {
      boost::system::error_code ignored;
      engine_.socket().shutdown(tcp::socket::shutdown_both, ignored);
      engine_.socket().close(ignored);
    });
  }

  tcp::socket& socket() override { return engine_.socket(); }
  // Decrypted bytes not yet read, records received and not yet decrypted, or bytes on the socket.
  bool has_buffered_input() override { return engine_.has_buffered_input() || Connection::has_buffered_input(); }
  const TlsInfo* tls() const override { return &info_; }
  SSL* native() const { return engine_.native(); }

 private:
  Error lost(const boost::system::error_code& ec) const {
    if (ec == asio::error::eof || ec == ssl::error::stream_truncated)
      return Error(Errc::network, "connection to " + peer_ + " closed by the peer");
    if (ec == asio::error::operation_aborted) return Error(Errc::network, "connection to " + peer_ + " was aborted");
    if (ec.category() == asio::error::get_ssl_category()) {
      int reason = ERR_GET_REASON(static_cast<unsigned long>(ec.value()));
      // TLS 1.3: the server judges the client certificate after the client's handshake ended, so
      // its verdict arrives as an alert on the first read.
      if (reason == SSL_R_TLSV13_ALERT_CERTIFICATE_REQUIRED)
        return Error(Errc::permission, peer_ + " requires a client certificate (--cert and --key)");
      if (reason == SSL_R_TLSV1_ALERT_UNKNOWN_CA || reason == SSL_R_SSLV3_ALERT_BAD_CERTIFICATE ||
          reason == SSL_R_SSLV3_ALERT_CERTIFICATE_UNKNOWN || reason == SSL_R_TLSV1_ALERT_ACCESS_DENIED)
        return Error(Errc::permission, peer_ + " refused the client certificate: " + ec.message());
    }
    return Error(Errc::network, "connection to " + peer_ + " lost: " + ec.message());
  }

  TlsContextPtr context_;
  TlsEngine engine_;
  TlsInfo info_;
  ChainVerdict verdict_;  // the server's judgement of the client's chain, filled during the handshake
};

// Closes the socket when the deadline passes, so a handshake stalled by a silent peer ends.
awaitable<void> close_after(tcp::socket& socket, std::chrono::steady_clock::duration d) {
  asio::steady_timer timer(co_await asio::this_coro::executor, d);
  co_await timer.async_wait(asio::use_awaitable);
  boost::system::error_code ignored;
  socket.close(ignored);
}

}  // namespace

TlsContextPtr make_server_tls(const ServerTlsConfig& config) {
  auto t = std::make_shared<TlsContext>(ssl::context::tls_server);
  tls13_only(t->ctx);
  SSL_CTX_set_num_tickets(t->ctx.native_handle(), 0);  // no resumption: nothing to gain, less state
  load(t->ctx, config.cert_file, config.key_file, "server");
  if (!config.client_ca_file.empty()) {
    if (SSL_CTX_load_verify_locations(t->ctx.native_handle(), config.client_ca_file.c_str(), nullptr) != 1)
      throw Error(Errc::usage, "cannot use --client-ca " + config.client_ca_file + ": " + openssl_reason());
    if (STACK_OF(X509_NAME)* names = SSL_load_client_CA_file(config.client_ca_file.c_str()))
      SSL_CTX_set_client_CA_list(t->ctx.native_handle(), names);
    t->verify_chain = true;
  }
  if (!config.x509_ca_dir.empty()) {
    add_grid_ca_dir(SSL_CTX_get_cert_store(t->ctx.native_handle()), config.x509_ca_dir);
    t->verify_chain = t->grid = true;
  }
  if (t->verify_chain) {
    // Asks for a certificate (optional: token users send none); judge_client_chain checks it.
    SSL_CTX_set_verify(t->ctx.native_handle(), SSL_VERIFY_PEER, nullptr);
    static int grid_tag = 1;
    SSL_CTX_set_cert_verify_callback(t->ctx.native_handle(), judge_client_chain, t->grid ? &grid_tag : nullptr);
  }
  return t;
}

TlsContextPtr make_client_tls(const ClientTlsConfig& config) {
  auto t = std::make_shared<TlsContext>(ssl::context::tls_client);
  tls13_only(t->ctx);
  if (!config.ca_file.empty()) {
    // A directory is a hashed CA directory (grid sites: X509_CERT_DIR, /etc/grid-security/certificates).
    const bool dir = std::filesystem::is_directory(config.ca_file);
    if (SSL_CTX_load_verify_locations(t->ctx.native_handle(), dir ? nullptr : config.ca_file.c_str(),
                                      dir ? config.ca_file.c_str() : nullptr) != 1)
      throw Error(Errc::usage, "cannot use --ca " + config.ca_file + ": " + openssl_reason());
    SSL_CTX_set_verify(t->ctx.native_handle(), SSL_VERIFY_PEER, nullptr);
    t->verify_chain = true;
  } else {
    SSL_CTX_set_verify(t->ctx.native_handle(), SSL_VERIFY_NONE, nullptr);  // pinned by fingerprint
  }
  if (!config.cert_file.empty() || !config.key_file.empty()) {
    if (config.cert_file.empty() || config.key_file.empty())
      throw Error(Errc::usage, "--cert and --key go together");
    load(t->ctx, config.cert_file, config.key_file, "client");
  }
  return t;
}

std::shared_ptr<Connection> make_tls_connection(tcp::socket socket, TlsContextPtr context) {
  return std::make_shared<TlsConnection>(std::move(socket), std::move(context));
}

awaitable<void> tls_handshake(Connection& conn, bool server, const std::string& host, const std::string& authority) {
  auto* tls = dynamic_cast<TlsConnection*>(&conn);
  if (!tls) throw Error(Errc::internal, "tls_handshake on a connection that is not TLS");
  bool done = co_await first_of(tls->handshake(server, host, authority), close_after(tls->socket(), handshake_timeout));
  if (!done)
    throw Error(Errc::network, "TLS handshake with " + (authority.empty() ? conn.peer() : authority) + " timed out");
}

void request_key_update(Connection& conn) {
  auto* tls = dynamic_cast<TlsConnection*>(&conn);
  if (!tls || SSL_key_update(tls->native(), SSL_KEY_UPDATE_REQUESTED) != 1)
    throw Error(Errc::internal, "cannot request a TLS key update on " + conn.peer() + ": " + openssl_reason());
}

std::array<std::uint8_t, 32> export_keying_material(const Connection& conn, const std::string& label,
                                                    std::span<const std::uint8_t> context) {
  auto* tls = dynamic_cast<const TlsConnection*>(&conn);
  if (!tls) throw Error(Errc::internal, "the TLS exporter needs a TLS connection (the control connection is one)");
  std::array<std::uint8_t, 32> out{};
  if (SSL_export_keying_material(tls->native(), out.data(), out.size(), label.data(), label.size(), context.data(),
                                 context.size(), 1) != 1)
    throw Error(Errc::internal, "cannot derive the data-stream key from the TLS session (SSL_export_keying_material: " +
                                    openssl_reason() + ")");
  return out;
}

std::string certificate_fingerprint_file(const std::string& pem_file) {
  FILE* f = std::fopen(pem_file.c_str(), "r");
  if (!f) throw Error(Errc::not_found, "cannot read certificate " + pem_file + ": " + errno_text(errno));
  X509* cert = PEM_read_X509(f, nullptr, nullptr, nullptr);
  std::fclose(f);
  if (!cert) throw Error(Errc::usage, pem_file + ": not a PEM certificate");
  std::string fp = fingerprint_of(cert);
  X509_free(cert);
  return fp;
}

std::string normalize_fingerprint(const std::string& text) {
  std::string t = text;
  if (t.size() > 7 && (t.compare(0, 7, "sha256:") == 0 || t.compare(0, 7, "SHA256:") == 0)) t = t.substr(7);
  std::string out;
  for (char c : t) {
    if (c == ':') continue;
    if (c >= 'A' && c <= 'F') c = static_cast<char>(c - 'A' + 'a');
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return "";
    out += c;
  }
  if (out.size() != 64) return "";
  return "sha256:" + out;
}

bool kernel_tls_available() {
  static const bool available = [] {
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return false;
    // Not connected: a loaded module answers ENOTCONN, an absent one ENOENT.
    int rc = ::setsockopt(fd, IPPROTO_TCP, TCP_ULP, "tls", 3);
    int err = errno;
    ::close(fd);
    return rc == 0 || err != ENOENT;
  }();
  return available;
}

}  // namespace pxfer::net
