#pragma once
// A TCP proxy on loopback that the reliability tests own: every connection a client makes to
// port() is forwarded to the upstream port, and any one of them can be cut (reset) or stalled
// (nothing forwarded either way, the sockets left open) after it carried a given number of
// bytes. It can also slow every connection down, so a transfer lasts long enough to be
// interrupted where the test wants. Plain sockets and threads: it must not share a single line
// with the code it tests.
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace pxfer::testing {

enum class Fault { cut, stall };

class FaultProxy {
 public:
  explicit FaultProxy(std::uint16_t upstream_port);
  ~FaultProxy();
  FaultProxy(const FaultProxy&) = delete;

  std::uint16_t port() const { return port_; }
  void set_upstream(std::uint16_t port) { upstream_.store(port); }
  // Per connection, each direction; 0 = unlimited.
  void set_rate(std::uint64_t bytes_per_second) { rate_.store(bytes_per_second); }
  // Connection number `index` (0 = the first accepted) gets `fault` once it has forwarded
  // `after_bytes` (both directions together).
  void inject(std::size_t index, Fault fault, std::uint64_t after_bytes);
  // Every connection open now gets `fault` at once.
  void inject_all(Fault fault);
  std::size_t accepted() const { return accepted_.load(); }
  std::size_t faults_fired() const { return fired_.load(); }

 private:
  struct Link;
  void accept_loop();
  void pump(std::shared_ptr<Link> link);
  void fire(Link& link, Fault fault);

  int listen_fd_ = -1;
  std::uint16_t port_ = 0;
  std::atomic<std::uint16_t> upstream_;
  std::atomic<std::uint64_t> rate_{0};
  std::atomic<bool> stopping_{false};
  std::atomic<std::size_t> accepted_{0};
  std::atomic<std::size_t> fired_{0};
  std::mutex mutex_;
  std::map<std::size_t, std::pair<Fault, std::uint64_t>> rules_;
  std::vector<std::shared_ptr<Link>> links_;
  std::vector<std::thread> threads_;
  std::thread acceptor_;
};

}  // namespace pxfer::testing
