#pragma once
// pxferd's admission control: --max-active, --max-streams-per-client, --max-clients and
// --max-starts-per-second. The rules (who may start, in what order) are AdmissionPolicy, pure;
// this wraps them for coroutines: a transfer waits for its grant, hearing its position about once
// a second, until it is admitted or its queue timeout runs out. Brownouts come from everything
// starting at once: this is the valve.
#include "pxfer/server/layer.hpp"
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "policy/admission_policy.hpp"
#include "net/connection.hpp"

namespace pxfer::server {

struct QueueState {
  unsigned position = 0;  // 1 = next to be admitted
  unsigned active = 0;
  unsigned queued = 0;
};

// The server's load as reported to clients (OPEN_OK, INFO).
struct LoadFigures {
  unsigned active = 0;
  unsigned queued = 0;
  unsigned max_active = 0;
  unsigned clients = 0;
};

class Admission : public std::enable_shared_from_this<Admission> {
 public:
  explicit Admission(AdmissionLimits limits) : policy_(limits) {}

  // Held while a transfer runs; releasing it admits the next in line.
  class Slot {
   public:
    Slot(std::shared_ptr<Admission> owner, AdmissionPolicy::Id id, unsigned streams)
        : owner_(std::move(owner)), id_(id), streams_(streams) {}
    ~Slot() { owner_->release(id_); }
    Slot(const Slot&) = delete;
    Slot& operator=(const Slot&) = delete;
    unsigned streams() const { return streams_; }  // data streams granted

   private:
    std::shared_ptr<Admission> owner_;
    AdmissionPolicy::Id id_;
    unsigned streams_;
  };

  using OnWait = std::function<net::awaitable<void>(QueueState)>;
  // Waits for a slot; calls `on_wait` when queued and then about every second. Throws
  // Error(network) at once when --max-clients is reached, and when still queued after `timeout`.
  net::awaitable<std::unique_ptr<Slot>> admit(AdmissionPolicy::Request request, std::chrono::milliseconds timeout,
                                              OnWait on_wait);

  LoadFigures load() const;
  unsigned active() const;
  unsigned streams_of(const std::string& client) const;
  unsigned max_active() const { return policy_.limits().max_active; }

 private:
  // A waiting transfer sleeps on its timer (on its own strand); a grant cancels the timer from a
  // handler posted to that strand, so a wake-up is never lost and no timer is touched across threads.
  struct Waiter {
    explicit Waiter(boost::asio::any_io_executor ex) : executor(ex), timer(std::move(ex)) {}
    boost::asio::any_io_executor executor;
    boost::asio::steady_timer timer;
    bool granted = false;  // under mutex_
    unsigned streams = 0;  // under mutex_, once granted
  };
  void release(AdmissionPolicy::Id id);
  using Signals = std::vector<std::shared_ptr<Waiter>>;
  // Caller holds mutex_: marks every waiter the policy admits now; the caller signals them with
  // wake() once the mutex is released (a signal may resume a waiter right here, on this thread).
  Signals dispatch();
  static void wake(const Signals& admitted);
  QueueState state_of(AdmissionPolicy::Id id) const;  // caller holds mutex_

  mutable std::mutex mutex_;
  AdmissionPolicy policy_;
  AdmissionPolicy::Id next_id_ = 0;
  std::map<AdmissionPolicy::Id, std::shared_ptr<Waiter>> waiters_;
};

}  // namespace pxfer::server
