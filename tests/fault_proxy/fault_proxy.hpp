#pragma once
// A TCP proxy on loopback that the reliability tests own: every connection a client makes to
// port() is forwarded to the upstream port, and any one of them can be cut (reset) or stalled
// (nothing forwarded either way, the sockets left open) after it carried a given number of
// bytes. It can also slow every connection down, so a transfer lasts long enough to be
// interrupted where the test wants. Plain sockets and threads: it must not share a single line
// with the code it tests.
//
// It is also the tests' independent witness of what crossed the wire: it counts the bytes it
// carried on every connection in each direction, knows how many connections are open at once,
// and can keep a copy of everything it carried (capture) for a test to search.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace pxfer::testing {

// stall_to_client: nothing more reaches the client on that connection, what the client sends
// still reaches the server (a reply lost on the way back).
enum class Fault { cut, stall, stall_to_client };

class FaultProxy {
 public:
  explicit FaultProxy(std::uint16_t upstream_port);
  ~FaultProxy();
  FaultProxy(const FaultProxy&) = delete;

  std::uint16_t port() const { return port_; }
  void set_upstream(std::uint16_t port) { upstream_.store(port); }
  // Per connection, each direction; 0 = unlimited.
  void set_rate(std::uint64_t bytes_per_second) { rate_.store(bytes_per_second); }
  // All connections together, both directions, from now on: one bottleneck they share (a link
  // that more streams cannot widen); 0 = unlimited.
  void set_total_rate(std::uint64_t bytes_per_second);
  // Connection number `index` (0 = the first accepted) gets `fault` once it has forwarded
  // `after_bytes` (both directions together).
  void inject(std::size_t index, Fault fault, std::uint64_t after_bytes);
  // Connection number `index` gets `fault` now (if it exists and is open).
  void inject_now(std::size_t index, Fault fault);
  // Every connection open now gets `fault` at once.
  void inject_all(Fault fault);
  // While frozen nothing is forwarded on any connection, open now or accepted later, and
  // connections are still accepted: a stopped server (or a dead path) as the client sees it.
  // Unfrozen, every connection not cut moves again.
  void set_frozen(bool on) { frozen_.store(on); }
  std::size_t accepted() const { return accepted_.load(); }
  std::size_t faults_fired() const { return fired_.load(); }

  // Bytes carried so far on one connection, each direction (the client's side is the one that
  // connected to port()).
  struct Carried {
    std::uint64_t to_server = 0;
    std::uint64_t to_client = 0;
  };
  // Per connection, in the order they were accepted (index as for inject()).
  std::vector<Carried> carried();
  // Totals over the connections accepted as number `first_index` or later.
  Carried carried_since(std::size_t first_index);
  // Connections accepted and not yet closed, now and at most at once since the proxy started.
  std::size_t open_now();
  std::size_t most_open_at_once() const { return most_open_.load(); }
  // From now on, keeps a copy of every byte carried (new and existing connections).
  void set_capture(bool on) { capture_.store(on); }
  // What connection `index` carried towards the server or the client while capturing.
  std::string captured(std::size_t index, bool to_server);

 private:
  struct Link;
  void accept_loop();
  void pump(std::shared_ptr<Link> link);
  void fire(Link& link, Fault fault);

  int listen_fd_ = -1;
  std::uint16_t port_ = 0;
  std::atomic<std::uint16_t> upstream_;
  std::atomic<std::uint64_t> rate_{0};
  std::atomic<std::uint64_t> total_rate_{0};
  std::mutex link_mutex_;
  std::chrono::steady_clock::time_point link_free_;  // when the shared link has sent what it was given
  std::atomic<bool> stopping_{false};
  std::atomic<std::size_t> accepted_{0};
  std::atomic<std::size_t> fired_{0};
  std::atomic<std::size_t> open_{0};
  std::atomic<std::size_t> most_open_{0};
  std::atomic<bool> capture_{false};
  std::atomic<bool> frozen_{false};
  std::mutex mutex_;
  std::map<std::size_t, std::pair<Fault, std::uint64_t>> rules_;
  std::vector<std::shared_ptr<Link>> links_;
  std::vector<std::thread> threads_;
  std::thread acceptor_;
};

}  // namespace pxfer::testing
