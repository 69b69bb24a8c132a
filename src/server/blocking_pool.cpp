#include "blocking_pool.hpp"

#include <boost/asio/associated_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/experimental/concurrent_channel.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace pxfer::server {
namespace {

namespace asio = boost::asio;

}  // namespace

BlockingPool::BlockingPool(unsigned threads) : pool_(threads) {}

BlockingPool::~BlockingPool() { pool_.join(); }

net::awaitable<void> BlockingPool::run(std::function<void()> work) {
  // The work is posted to the pool as a plain function and its completion dispatched to the
  // awaiting coroutine's own executor: the session resumes on its strand, not on a pool thread.
  // No coroutine is spawned on the pool (co_spawn cost a frame, a cancellation state and an
  // extra post per file opened: docs/performance.md section 5).
  // A void(exception_ptr) completion: the awaiting coroutine rethrows what `work` threw.
  co_await asio::async_initiate<decltype(asio::use_awaitable), void(std::exception_ptr)>(
      [this](auto handler, std::function<void()> job) {
        auto resume_on = asio::get_associated_executor(handler);
        asio::post(pool_.get_executor(), [job = std::move(job), handler = std::move(handler), resume_on]() mutable {
          std::exception_ptr error;
          try {
            job();
          } catch (...) {
            error = std::current_exception();
          }
          asio::dispatch(resume_on, [handler = std::move(handler), error]() mutable { std::move(handler)(error); });
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
