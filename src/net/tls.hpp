#pragma once
// TLS 1.3 connections (OpenSSL driven by net/tls_engine.hpp; Asio's ssl::context holds the
// settings) behind the same net::Connection interface as plain TCP, the contexts both ends build,
// and certificate fingerprints.
// Only this header's users see OpenSSL types by name; Asio's SSL headers stay in tls.cpp.
#include "pxfer/io/layer.hpp"
#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "connection.hpp"

namespace pxfer::net {

// An ssl::context behind a pointer, so this header needs no Asio SSL include.
class TlsContext;
using TlsContextPtr = std::shared_ptr<TlsContext>;

struct ServerTlsConfig {
  std::string cert_file;       // PEM chain
  std::string key_file;        // PEM private key
  std::string client_ca_file;  // "" = client certificates are not requested (unless x509_ca_dir)
  // Grid X.509 (grid_x509.hpp): client certificates and RFC 3820 proxies verified against this
  // hashed CA directory, CRLs where present; the identity is the end-entity DN. "" = off.
  std::string x509_ca_dir;
};
// Throws Error(usage/permission) naming the file that cannot be used.
TlsContextPtr make_server_tls(const ServerTlsConfig& config);

struct ClientTlsConfig {
  std::string ca_file;    // "" = no chain verification (the caller pins the fingerprint)
  std::string cert_file;  // client certificate for mutual TLS, "" = none
  std::string key_file;
};
TlsContextPtr make_client_tls(const ClientTlsConfig& config);

// A TLS connection over a connected socket; tls_handshake must complete before any read or write.
std::shared_ptr<Connection> make_tls_connection(tcp::socket socket, TlsContextPtr context);
// The TLS 1.3 handshake (10 s deadline). Client side (server = false): with a CA in the context
// the chain and `host` (DNS name or IP address) are verified, a failure being Errc::permission.
// Server side: a client certificate is checked against the client CA but never fails the
// handshake: the outcome is in tls()->verify_error, so the refusal can be a clear ERROR frame.
// Arguments by reference (g++ 12: no temporaries with destructors across co_await).
awaitable<void> tls_handshake(Connection& conn, bool server, const std::string& host, const std::string& authority);

// Asks for a TLS 1.3 key update in both directions (RFC 8446 4.6.3): the KeyUpdate leaves with
// this end's next write, and the peer answers with one of its own from its read. Call it on the
// connection's executor. Throws Error(internal) on a clear connection.
void request_key_update(Connection& conn);

// The TLS exporter (RFC 8446 7.5, SSL_export_keying_material) of a finished TLS connection:
// 32 bytes that only its two ends can compute. Throws Error(internal) on a clear connection.
std::array<std::uint8_t, 32> export_keying_material(const Connection& conn, const std::string& label,
                                                    std::span<const std::uint8_t> context);

// "sha256:" + lower-case hex of the SHA-256 of a certificate's DER encoding.
std::string certificate_fingerprint_file(const std::string& pem_file);
// Normalises "sha256:AB:CD..." / "SHA256:abcd..." / "abcd..." to "sha256:abcd...", or "" if invalid.
std::string normalize_fingerprint(const std::string& text);

// Kernel TLS: the `tls` upper-layer protocol is loadable (setsockopt TCP_ULP on a fresh socket
// fails with ENOENT when the module is absent). Checked once, cached.
bool kernel_tls_available();

}  // namespace pxfer::net
