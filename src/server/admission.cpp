#include "admission.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "pxfer/common/error.hpp"
#include "pxfer/core/rate_meter.hpp"

namespace pxfer::server {

namespace asio = boost::asio;

LoadFigures Admission::load() const {
  std::lock_guard lock(mutex_);
  return LoadFigures{policy_.active(), policy_.queued(), policy_.limits().max_active, policy_.clients()};
}

unsigned Admission::active() const {
  std::lock_guard lock(mutex_);
  return policy_.active();
}

unsigned Admission::streams_of(const std::string& client) const {
  std::lock_guard lock(mutex_);
  return policy_.streams_of(client);
}

QueueState Admission::state_of(AdmissionPolicy::Id id) const {
  return QueueState{policy_.position(id), policy_.active(), policy_.queued()};
}

Admission::Signals Admission::dispatch() {
  Signals admitted;
  for (const auto& grant : policy_.dispatch(Clock::now())) {
    auto it = waiters_.find(grant.id);
    if (it == waiters_.end()) continue;
    it->second->granted = true;
    it->second->streams = grant.streams;
    admitted.push_back(it->second);
    waiters_.erase(it);
  }
  return admitted;
}

void Admission::wake(const Signals& admitted) {
  for (const auto& w : admitted) asio::post(w->executor, [w] { w->timer.cancel(); });
}

net::awaitable<std::unique_ptr<Admission::Slot>> Admission::admit(AdmissionPolicy::Request request,
                                                                  std::chrono::milliseconds timeout, OnWait on_wait) {
  auto waiter = std::make_shared<Waiter>(co_await asio::this_coro::executor);
  AdmissionPolicy::Id id = 0;
  QueueState state;
  std::optional<std::string> refusal;
  Signals admitted_now;
  bool granted = false;
  {
    std::lock_guard lock(mutex_);
    id = ++next_id_;
    refusal = policy_.enqueue(id, std::move(request));
    if (!refusal) {
      waiters_[id] = waiter;
      admitted_now = dispatch();
      granted = waiter->granted;
      state = state_of(id);
    }
  }
  wake(admitted_now);
  if (refusal) throw Error(Errc::network, *refusal);
  if (granted) co_return std::make_unique<Slot>(shared_from_this(), id, waiter->streams);  // read under the lock above
  const auto deadline = Clock::now() + timeout;
  co_await on_wait(state);
  auto told = Clock::now();
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    auto wait = std::min(left, std::chrono::milliseconds(1000));
    {
      std::lock_guard lock(mutex_);
      if (waiter->granted) break;
      // Paced: wake when the next start is allowed, to admit whoever is first then.
      if (auto pace = policy_.next_start_in(Clock::now()))
        wait = std::min(wait, std::chrono::ceil<std::chrono::milliseconds>(*pace));
    }
    // From the check above to the wait below nothing else runs on this strand, so a grant's
    // cancel (posted to this strand) finds the wait in progress.
    waiter->timer.expires_after(std::max(std::chrono::milliseconds(1), wait));
    co_await waiter->timer.async_wait(asio::as_tuple(asio::use_awaitable));
    bool timed_out = false;
    {
      std::lock_guard lock(mutex_);
      if (waiter->granted) break;
      admitted_now = dispatch();
      granted = waiter->granted;
      state = state_of(id);
      if (!granted && Clock::now() >= deadline) {
        policy_.cancel(id);
        waiters_.erase(id);
        timed_out = true;
      }
    }
    wake(admitted_now);
    if (granted) break;
    if (timed_out)
      throw Error(Errc::network, "the server is busy: still queued (position " + std::to_string(state.position) +
                                     ") after " + std::to_string(timeout.count() / 1000) + " s; retry later");
    // About once a second, however often pacing wakes us.
    if (Clock::now() - told < std::chrono::milliseconds(900)) continue;
    told = Clock::now();
    co_await on_wait(state);
  }
  unsigned streams = 0;
  {
    std::lock_guard lock(mutex_);
    streams = waiter->streams;
  }
  co_return std::make_unique<Slot>(shared_from_this(), id, streams);
}

void Admission::release(AdmissionPolicy::Id id) {
  Signals admitted;
  {
    std::lock_guard lock(mutex_);
    policy_.release(id);
    admitted = dispatch();
  }
  wake(admitted);
}

}  // namespace pxfer::server
