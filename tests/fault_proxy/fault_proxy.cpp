#include "fault_proxy.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <optional>
#include <stdexcept>
#include <string>

namespace pxfer::testing {

struct FaultProxy::Link {
  std::size_t index = 0;
  int client = -1;
  int server = -1;
  std::atomic<std::uint64_t> forwarded{0};
  std::atomic<std::uint64_t> to_server{0};
  std::atomic<std::uint64_t> to_client{0};
  std::atomic<bool> closed{false};
  std::mutex capture_mutex;
  std::string captured[2];  // [0] towards the server, [1] towards the client
  std::atomic<int> state{0};  // 0 forwarding, 1 stalled, 2 cut, 3 stalled towards the client
  std::mutex close_mutex;
};

namespace {
int loopback_socket(std::uint16_t port, bool listen_on_it) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw std::runtime_error("socket failed");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (listen_on_it) {
    int on = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
    if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(fd, 256) != 0) {
      ::close(fd);
      throw std::runtime_error("cannot listen on loopback");
    }
  } else if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// Reset rather than FIN: what a middlebox that drops a connection looks like to both ends.
void reset(int fd) {
  if (fd < 0) return;
  linger l{1, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof l);
  ::close(fd);
}

bool write_all(int fd, const char* data, std::size_t n) {
  while (n > 0) {
    ssize_t w = ::send(fd, data, n, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    data += w;
    n -= static_cast<std::size_t>(w);
  }
  return true;
}
}  // namespace

FaultProxy::FaultProxy(std::uint16_t upstream_port) : upstream_(upstream_port) {
  listen_fd_ = loopback_socket(0, true);
  sockaddr_in addr{};
  socklen_t len = sizeof addr;
  ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
  port_ = ntohs(addr.sin_port);
  acceptor_ = std::thread([this] { accept_loop(); });
}

FaultProxy::~FaultProxy() {
  stopping_ = true;
  acceptor_.join();
  for (auto& t : threads_) t.join();
  ::close(listen_fd_);
}

void FaultProxy::inject(std::size_t index, Fault fault, std::uint64_t after_bytes) {
  std::lock_guard lock(mutex_);
  rules_[index] = {fault, after_bytes};
}

void FaultProxy::inject_now(std::size_t index, Fault fault) {
  std::lock_guard lock(mutex_);
  for (auto& link : links_)
    if (link->index == index) fire(*link, fault);
}

void FaultProxy::inject_all(Fault fault) {
  std::lock_guard lock(mutex_);
  for (auto& link : links_) fire(*link, fault);
}

void FaultProxy::fire(Link& link, Fault fault) {
  std::lock_guard lock(link.close_mutex);
  if (link.state.load() == 2) return;
  if (fault == Fault::stall) {
    if (link.state.exchange(1) == 0) ++fired_;
    return;
  }
  if (fault == Fault::stall_to_client) {
    if (link.state.exchange(3) == 0) ++fired_;
    return;
  }
  if (link.state.exchange(2) != 2) ++fired_;
  ::shutdown(link.client, SHUT_RDWR);  // wakes the pump; it resets and closes both
  ::shutdown(link.server, SHUT_RDWR);
}

void FaultProxy::accept_loop() {
  while (!stopping_) {
    pollfd p{listen_fd_, POLLIN, 0};
    if (::poll(&p, 1, 50) <= 0) continue;
    int client = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (client < 0) continue;
    int server = loopback_socket(upstream_.load(), false);
    if (server < 0) {
      reset(client);  // upstream down: the client sees its connection refused-like reset
      continue;
    }
    int on = 1;
    ::setsockopt(client, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
    ::setsockopt(server, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
    auto link = std::make_shared<Link>();
    link->index = accepted_++;
    link->client = client;
    link->server = server;
    std::size_t open = ++open_;
    for (std::size_t most = most_open_.load(); open > most && !most_open_.compare_exchange_weak(most, open);) {
    }
    std::lock_guard lock(mutex_);
    links_.push_back(link);
    threads_.emplace_back([this, link] { pump(link); });
  }
  std::lock_guard lock(mutex_);
  for (auto& link : links_) fire(*link, Fault::cut);
}

void FaultProxy::pump(std::shared_ptr<Link> link) {
  std::vector<char> buffer(64 * 1024);
  bool client_open = true, server_open = true;
  auto started = std::chrono::steady_clock::now();
  while (!stopping_ && link->state.load() != 2 && (client_open || server_open)) {
    if (link->state.load() == 1 || frozen_.load()) {  // stalled: hold both sockets open, move nothing
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      continue;
    }
    const bool hold_replies = link->state.load() == 3;  // the server's bytes stay in its socket
    pollfd p[2] = {{link->client, static_cast<short>(client_open ? POLLIN : 0), 0},
                   {link->server, static_cast<short>(server_open && !hold_replies ? POLLIN : 0), 0}};
    if (::poll(p, 2, 50) <= 0) continue;
    for (int side = 0; side < 2; ++side) {
      if (!(p[side].revents & (POLLIN | POLLHUP | POLLERR)) || (side == 1 && hold_replies)) continue;
      int from = side == 0 ? link->client : link->server;
      int to = side == 0 ? link->server : link->client;
      ssize_t n = ::recv(from, buffer.data(), buffer.size(), 0);
      if (n <= 0) {
        (side == 0 ? client_open : server_open) = false;
        ::shutdown(to, SHUT_WR);  // pass the FIN on
        continue;
      }
      if (!write_all(to, buffer.data(), static_cast<std::size_t>(n))) {
        client_open = server_open = false;
        break;
      }
      std::uint64_t total = link->forwarded += static_cast<std::uint64_t>(n);
      (side == 0 ? link->to_server : link->to_client) += static_cast<std::uint64_t>(n);
      if (capture_.load()) {
        std::lock_guard lock(link->capture_mutex);
        link->captured[side].append(buffer.data(), static_cast<std::size_t>(n));
      }
      if (std::uint64_t rate = rate_.load()) {
        // Paced on the total so far: a slow start is caught up, a fast one waits.
        auto due = started + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                 std::chrono::duration<double>(static_cast<double>(total) / static_cast<double>(rate)));
        std::this_thread::sleep_until(due);
      }
      if (std::uint64_t rate = total_rate_.load()) {
        // Every connection's bytes queue for one link, which stores no unused time: a chunk goes
        // out when the link is free, or now if it is idle.
        std::chrono::steady_clock::time_point done;
        {
          std::lock_guard lock(link_mutex_);
          link_free_ = std::max(link_free_, std::chrono::steady_clock::now()) +
                       std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                           std::chrono::duration<double>(static_cast<double>(n) / static_cast<double>(rate)));
          done = link_free_;
        }
        std::this_thread::sleep_until(done);
      }
      std::optional<std::pair<Fault, std::uint64_t>> rule;
      {
        std::lock_guard lock(mutex_);
        auto it = rules_.find(link->index);
        if (it != rules_.end() && total >= it->second.second) {
          rule = it->second;
          rules_.erase(it);
        }
      }
      if (rule) fire(*link, rule->first);
    }
  }
  std::lock_guard lock(link->close_mutex);
  reset(link->client);
  reset(link->server);
  link->client = link->server = -1;
  link->state = 2;
  if (!link->closed.exchange(true)) --open_;
}

void FaultProxy::set_total_rate(std::uint64_t bytes_per_second) { total_rate_ = bytes_per_second; }

std::vector<FaultProxy::Carried> FaultProxy::carried() {
  std::lock_guard lock(mutex_);
  std::vector<Carried> out;
  for (const auto& link : links_) out.push_back({link->to_server.load(), link->to_client.load()});
  return out;
}

FaultProxy::Carried FaultProxy::carried_since(std::size_t first_index) {
  Carried sum;
  auto all = carried();
  for (std::size_t i = first_index; i < all.size(); ++i) {
    sum.to_server += all[i].to_server;
    sum.to_client += all[i].to_client;
  }
  return sum;
}

std::size_t FaultProxy::open_now() { return open_.load(); }

std::string FaultProxy::captured(std::size_t index, bool to_server) {
  std::shared_ptr<Link> link;
  {
    std::lock_guard lock(mutex_);
    if (index >= links_.size()) return {};
    link = links_[index];
  }
  std::lock_guard lock(link->capture_mutex);
  return link->captured[to_server ? 0 : 1];
}

}  // namespace pxfer::testing
