#pragma once
// A proxy on loopback that an attack test puts between pxfer and pxferd (injection_test.cpp,
// small_channel_test.cpp): it accepts, connects to the upstream port, and hands each pair of
// sockets to the test's from_client() on a thread of its own. The test decides what to copy,
// change or inject; this class keeps the sockets and threads, and a log of what the attacker did.
#include <poll.h>

#include <atomic>
#include <functional>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "support/raw_frames.hpp"

namespace pxfer::e2e {

class PathProxy {
 public:
  // Listens on 127.0.0.1 (a free port); the derived constructor calls start() last.
  explicit PathProxy(std::uint16_t upstream) : upstream_(upstream) {
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(listen_fd_, 64) != 0)
      throw std::runtime_error("cannot listen on loopback");
    socklen_t len = sizeof a;
    ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
  }
  // Derived destructors call stop() first: from_client() must not run on a half-destroyed object.
  virtual ~PathProxy() {
    stop();
    ::close(listen_fd_);
    for (int fd : fds_) ::close(fd);
  }
  PathProxy(const PathProxy&) = delete;
  PathProxy& operator=(const PathProxy&) = delete;

  std::uint16_t port() const { return port_; }
  std::string what_happened() {
    std::lock_guard lock(mutex_);
    return log_;
  }

 protected:
  void start() { acceptor_ = std::thread([this] { accept_loop(); }); }
  // Shuts every connection down and joins every thread (more than once is fine).
  void stop() {
    if (stopping_.exchange(true)) return;
    {
      std::lock_guard lock(mutex_);
      for (int fd : fds_) ::shutdown(fd, SHUT_RDWR);
    }
    if (acceptor_.joinable()) acceptor_.join();  // it adds no thread after stopping_
    for (;;) {
      std::vector<std::thread> threads;
      {
        std::lock_guard lock(mutex_);
        threads.swap(threads_);
      }
      if (threads.empty()) break;
      for (auto& t : threads) t.join();
    }
  }
  // A pair of connected sockets, client side and server side; on its own thread.
  virtual void from_client(int client, int server) = 0;

  void note(const std::string& line) {
    std::lock_guard lock(mutex_);
    log_ += line + "\n";
  }
  int track(int fd) {
    std::lock_guard lock(mutex_);
    fds_.push_back(fd);
    return fd;
  }
  void spawn(std::function<void()> f) {
    std::lock_guard lock(mutex_);
    threads_.emplace_back(std::move(f));
  }

  const std::uint16_t upstream_;

 private:
  void accept_loop() {
    while (!stopping_) {
      pollfd p{listen_fd_, POLLIN, 0};
      if (::poll(&p, 1, 50) <= 0) continue;
      int client = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (client < 0) continue;
      int server = raw::connect_loopback(upstream_);
      if (server < 0) {
        ::close(client);
        continue;
      }
      int on = 1;
      ::setsockopt(client, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
      track(client);
      track(server);
      spawn([this, client, server] { from_client(client, server); });
    }
  }

  int listen_fd_ = -1;
  std::uint16_t port_ = 0;
  std::atomic<bool> stopping_{false};
  std::mutex mutex_;
  std::vector<int> fds_;
  std::string log_;
  std::thread acceptor_;
  std::vector<std::thread> threads_;
};

}  // namespace pxfer::e2e
