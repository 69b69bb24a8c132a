#pragma once
// A raw TCP connection from a chosen loopback source address (127.0.0.2, ...) to 127.0.0.1:port:
// a test can be "another client" for the per-address limits, or a stranger that never logs in
// (limits_test.cpp, exhaustion_test.cpp), while pxfer itself connects from 127.0.0.1.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <stdexcept>
#include <string>

namespace pxfer::e2e {

class SourcedConnection {
 public:
  SourcedConnection(const std::string& source, std::uint16_t port) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd_ < 0) throw std::runtime_error("socket failed");
    sockaddr_in local{};
    local.sin_family = AF_INET;
    ::inet_pton(AF_INET, source.c_str(), &local.sin_addr);
    sockaddr_in remote{};
    remote.sin_family = AF_INET;
    remote.sin_port = htons(port);
    ::inet_pton(AF_INET, "127.0.0.1", &remote.sin_addr);
    if (::bind(fd_, reinterpret_cast<sockaddr*>(&local), sizeof local) != 0 ||
        ::connect(fd_, reinterpret_cast<sockaddr*>(&remote), sizeof remote) != 0) {
      const int err = errno;
      ::close(fd_);
      throw std::runtime_error("connect from " + source + " failed: " + std::to_string(err));
    }
    timeval tv{2, 0};  // a send the server no longer reads gives up
    ::setsockopt(fd_, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  }
  ~SourcedConnection() { ::close(fd_); }
  SourcedConnection(const SourcedConnection&) = delete;
  SourcedConnection& operator=(const SourcedConnection&) = delete;

  // Sends what it can of `data` (the server may close the connection first).
  void send_some(const std::string& data) {
    for (std::size_t sent = 0; sent < data.size();) {
      ssize_t n = ::send(fd_, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) return;
      sent += static_cast<std::size_t>(n);
    }
  }
  bool send_byte(char c) { return ::send(fd_, &c, 1, MSG_NOSIGNAL) == 1; }
  // True once the server closed the connection, waiting at most `timeout_ms`.
  bool closed_within(int timeout_ms) {
    timeval tv{timeout_ms / 1000, (timeout_ms % 1000) * 1000};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    char buf[256];
    for (;;) {
      ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
      if (n == 0) return true;
      if (n < 0) return errno == ECONNRESET;
    }
  }

 private:
  int fd_ = -1;
};

}  // namespace pxfer::e2e
