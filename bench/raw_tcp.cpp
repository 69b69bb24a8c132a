#include "raw_tcp.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <stdexcept>
#include <thread>
#include <vector>

namespace pxfer::bench {

double raw_loopback_copy(std::uint64_t bytes, std::uint32_t chunk) {
  int listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  if (::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(listener, 1) != 0 ||
      ::getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len) != 0)
    throw std::runtime_error("raw_loopback_copy: cannot listen on 127.0.0.1");
  std::thread receiver([listener, bytes, chunk] {
    int fd = ::accept(listener, nullptr, nullptr);
    std::vector<char> buf(chunk);
    std::uint64_t got = 0;
    while (got < bytes) {
      ssize_t n = ::recv(fd, buf.data(), buf.size(), 0);
      if (n <= 0) break;
      got += static_cast<std::uint64_t>(n);
    }
    ::close(fd);
  });
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) throw std::runtime_error("connect failed");
  std::vector<char> buf(chunk, 'x');
  auto start = std::chrono::steady_clock::now();
  std::uint64_t sent = 0;
  while (sent < bytes) {
    std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(chunk, bytes - sent));
    ssize_t n = ::send(fd, buf.data(), want, 0);
    if (n <= 0) break;
    sent += static_cast<std::uint64_t>(n);
  }
  ::shutdown(fd, SHUT_WR);
  receiver.join();
  auto seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ::close(fd);
  ::close(listener);
  return seconds;
}

}  // namespace pxfer::bench
