#pragma once
// pxferd --max-active: at most N transfers move data at once; the others wait in line (first come,
// first served) and hear their position about once a second, until they are admitted or their
// queue timeout runs out. Brownouts come from everything starting at once: this is the valve.
#include <boost/asio/experimental/concurrent_channel.hpp>
#include <chrono>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>

#include "net/connection.hpp"

namespace pxfer::server {

struct QueueState {
  unsigned position = 0;  // 1 = next to be admitted
  unsigned active = 0;
  unsigned queued = 0;
};

class Admission : public std::enable_shared_from_this<Admission> {
 public:
  explicit Admission(unsigned max_active) : max_active_(max_active) {}

  // Held while a transfer runs; releasing it admits the next in line.
  class Slot {
   public:
    explicit Slot(std::shared_ptr<Admission> owner) : owner_(std::move(owner)) {}
    ~Slot() { owner_->release(); }
    Slot(const Slot&) = delete;
    Slot& operator=(const Slot&) = delete;

   private:
    std::shared_ptr<Admission> owner_;
  };

  using OnWait = std::function<net::awaitable<void>(QueueState)>;
  // Waits for a slot; calls `on_wait` when queued and then about every second. Throws
  // Error(network) when still queued after `timeout`.
  net::awaitable<std::unique_ptr<Slot>> admit(std::chrono::milliseconds timeout, OnWait on_wait);

  unsigned active() const;
  unsigned queued() const;
  unsigned max_active() const { return max_active_; }

 private:
  struct Waiter {
    explicit Waiter(boost::asio::any_io_executor ex) : admitted(std::move(ex), 1) {}
    boost::asio::experimental::concurrent_channel<void(boost::system::error_code)> admitted;
    bool granted = false;  // under mutex_
  };
  void release();
  QueueState state_of(const std::shared_ptr<Waiter>& w) const;  // caller holds mutex_

  const unsigned max_active_;  // 0 = no limit
  mutable std::mutex mutex_;
  unsigned active_ = 0;
  std::deque<std::shared_ptr<Waiter>> line_;
};

}  // namespace pxfer::server
