#pragma once
// TLS over a TCP socket with OpenSSL driven directly: SSL reads records from a buffer this engine
// fills with large socket reads, and writes them into a buffer it sends in large writes, through
// a BIO of its own. Asio's ssl::stream puts a 17 KiB BIO pair between the two instead, which cost
// each byte two more copies at the sender (into the pair, out of it) and one more at the receiver,
// and the receiver a socket read per 17 KiB (docs/performance.md section 14).
//
// Everything runs on the socket's executor (a strand), as Asio's stream required too: at most one
// read and one write in flight, never two OpenSSL calls at once. Records that a read produces
// (TLS 1.3 post-handshake messages) are sent by that read unless a write is sending, which then
// sends them after its own.
#include "pxfer/io/layer.hpp"
#include <openssl/ssl.h>

#include <boost/asio/steady_timer.hpp>
#include <boost/system/error_code.hpp>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "connection.hpp"

namespace pxfer::net {

class TlsEngine {
 public:
  // Records gather up to this much before a write sends them (plaintext is encrypted in pieces of
  // `piece`, so a send is at most chunk + piece and a record's overhead); a read asks the socket
  // for up to `read_size`. Per busy connection that is about 0.8 MiB of buffers.
  static constexpr std::size_t chunk = 256 * 1024;
  static constexpr std::size_t piece = 64 * 1024;
  static constexpr std::size_t read_size = 128 * 1024;

  TlsEngine(tcp::socket socket, SSL_CTX* context);
  ~TlsEngine();
  TlsEngine(const TlsEngine&) = delete;
  TlsEngine& operator=(const TlsEngine&) = delete;

  SSL* native() const { return ssl_; }
  tcp::socket& socket() { return socket_; }

  // Errors come back as values, in Asio's categories (asio::error::eof for a closed peer, the
  // SSL category with OpenSSL's error code for a TLS failure), as Asio's TLS stream gave them.
  awaitable<boost::system::error_code> handshake(bool server);
  awaitable<std::pair<boost::system::error_code, std::size_t>> read_some(std::span<std::uint8_t> out);
  // Encrypts all of `parts` and sends the records in writes of about `chunk` bytes; `progress`
  // grows by the plaintext bytes as they are encrypted.
  awaitable<boost::system::error_code> write(std::span<const std::span<const std::uint8_t>> parts,
                                             std::atomic<std::uint64_t>* progress);
  // Decrypted bytes, or received records, already here (a read would not wait for the socket).
  bool has_buffered_input() const;

 private:
  static BIO_METHOD* bio_method();
  static int bio_write(BIO* bio, const char* data, std::size_t size, std::size_t* written);
  static int bio_read(BIO* bio, char* data, std::size_t size, std::size_t* read);
  static long bio_ctrl(BIO* bio, int cmd, long num, void* ptr);

  awaitable<boost::system::error_code> fill();
  awaitable<boost::system::error_code> send_out();
  boost::system::error_code failure(int ssl_error) const;

  tcp::socket socket_;
  SSL* ssl_ = nullptr;
  std::vector<std::uint8_t> in_;  // received, not yet taken by SSL: [in_pos_, in_end_)
  std::size_t in_pos_ = 0, in_end_ = 0;
  std::vector<std::uint8_t> out_;      // records SSL wrote, not yet handed to the socket
  std::vector<std::uint8_t> sending_;  // records the socket is sending now
  bool send_active_ = false;
  asio::steady_timer send_idle_;  // a second sender waits on it while the first sends
};

}  // namespace pxfer::net
