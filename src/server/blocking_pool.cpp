#include "blocking_pool.hpp"

#include <boost/asio/associated_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/experimental/concurrent_channel.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "pxfer/core/limits.hpp"

namespace pxfer::server {
namespace {

namespace asio = boost::asio;

}  // namespace

BlockingPool::BlockingPool(unsigned threads) : queue_(threads + limits::blocking_workers_kept_free, limits::blocking_workers_kept_free) {
  for (unsigned i = 0; i < threads + limits::blocking_workers_kept_free; ++i) threads_.emplace_back([this] { work(); });
}

BlockingPool::~BlockingPool() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (auto& t : threads_) t.join();
}

void BlockingPool::enqueue(const std::string& identity, std::function<void()> job) {
  {
    std::lock_guard lock(mutex_);
    queue_.push(identity, std::move(job));
  }
  wake_.notify_one();
}

// One thread of the pool: takes what FairShare says, until the pool stops and nothing waits.
void BlockingPool::work() {
  std::unique_lock lock(mutex_);
  for (;;) {
    auto next = queue_.start();
    if (!next) {
      if (stopping_ && queue_.waiting() == 0) return;
      wake_.wait(lock);
      continue;
    }
    lock.unlock();
    next->second();  // never throws: run() catches what the work throws
    lock.lock();
    queue_.finish(next->first);
    wake_.notify_all();  // a job held back for its identity's share may start now
  }
}

net::awaitable<void> BlockingPool::run(std::function<void()> work, const std::string& identity) {
  // The work is queued as a plain function and its completion dispatched to the awaiting
  // coroutine's own executor: the session resumes on its strand, not on a pool thread.
  // No coroutine is spawned on the pool (co_spawn cost a frame, a cancellation state and an
  // extra post per file opened: docs/performance.md section 5).
  // A void(exception_ptr) completion: the awaiting coroutine rethrows what `work` threw.
  co_await asio::async_initiate<decltype(asio::use_awaitable), void(std::exception_ptr)>(
      [this, &identity](auto handler, std::function<void()> job) {
        auto resume_on = asio::get_associated_executor(handler);
        // Held in a shared_ptr: the handler moves only, the queue's std::function copies.
        auto waiting = std::make_shared<decltype(handler)>(std::move(handler));
        enqueue(identity, [job = std::move(job), waiting, resume_on]() mutable {
          std::exception_ptr error;
          try {
            job();
          } catch (...) {
            error = std::current_exception();
          }
          asio::dispatch(resume_on, [waiting, error]() mutable { std::move(*waiting)(error); });
        });
      },
      asio::use_awaitable, std::move(work));
}

// A counting semaphore: a channel whose buffer holds `per_identity` sends; a send waits while
// the buffer is full, a receive frees a place.
struct IdentityGate::Slots {
  Slots(asio::any_io_executor ex, unsigned n) : channel(std::move(ex), n) {}
  asio::experimental::concurrent_channel<void(boost::system::error_code)> channel;
  unsigned users = 0;  // running and waiting, under the gate's mutex
};

net::awaitable<IdentityGate::Permit> IdentityGate::enter(const std::string& identity) {
  auto executor = co_await asio::this_coro::executor;
  std::shared_ptr<Slots> slots;
  {
    std::lock_guard lock(mutex_);
    auto& found = slots_[identity];
    if (!found) found = std::make_shared<Slots>(executor, per_identity_);
    ++found->users;
    slots = found;
  }
  // From here on, leaving (even by an exception or a cancelled wait) counts the user out; only a
  // permit that got its place gives one back.
  Permit permit(this, identity, slots);
  co_await slots->channel.async_send(boost::system::error_code{}, asio::use_awaitable);
  permit.held_ = true;
  co_return std::move(permit);
}

IdentityGate::Permit::Permit(Permit&& other) noexcept
    : gate_(std::exchange(other.gate_, nullptr)),
      identity_(std::move(other.identity_)),
      slots_(std::move(other.slots_)),
      held_(other.held_) {}

IdentityGate::Permit::~Permit() {
  if (gate_) gate_->leave(identity_, slots_, held_);
}

void IdentityGate::leave(const std::string& identity, const std::shared_ptr<Slots>& slots, bool held) noexcept {
  if (held) slots->channel.try_receive([](boost::system::error_code) {});
  std::lock_guard lock(mutex_);
  if (--slots->users == 0) slots_.erase(identity);
}

}  // namespace pxfer::server
