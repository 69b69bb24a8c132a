#include "admission.hpp"

#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "net/race.hpp"
#include "pxfer/error.hpp"
#include "pxfer/rate_meter.hpp"

namespace pxfer::server {

namespace asio = boost::asio;

namespace {
net::awaitable<void> sleep_for(std::chrono::milliseconds d) {
  asio::steady_timer timer(co_await asio::this_coro::executor, d);
  co_await timer.async_wait(asio::use_awaitable);
}
}  // namespace

unsigned Admission::active() const {
  std::lock_guard lock(mutex_);
  return active_;
}

unsigned Admission::queued() const {
  std::lock_guard lock(mutex_);
  return static_cast<unsigned>(line_.size());
}

QueueState Admission::state_of(const std::shared_ptr<Waiter>& w) const {
  QueueState s{0, active_, static_cast<unsigned>(line_.size())};
  for (std::size_t i = 0; i < line_.size(); ++i)
    if (line_[i] == w) s.position = static_cast<unsigned>(i + 1);
  return s;
}

net::awaitable<std::unique_ptr<Admission::Slot>> Admission::admit(std::chrono::milliseconds timeout, OnWait on_wait) {
  auto waiter = std::make_shared<Waiter>(co_await asio::this_coro::executor);
  QueueState state;
  {
    std::lock_guard lock(mutex_);
    if (max_active_ == 0 || (active_ < max_active_ && line_.empty())) {
      ++active_;
      co_return std::make_unique<Slot>(shared_from_this());
    }
    line_.push_back(waiter);
    state = state_of(waiter);
  }
  const auto deadline = Clock::now() + timeout;
  co_await on_wait(state);
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    auto wait = std::max(std::chrono::milliseconds(1), std::min(left, std::chrono::milliseconds(1000)));
    bool admitted = co_await net::first_of(waiter->admitted.async_receive(asio::use_awaitable), sleep_for(wait));
    if (admitted) co_return std::make_unique<Slot>(shared_from_this());
    {
      std::lock_guard lock(mutex_);
      if (waiter->granted) continue;  // handed a slot just now: its signal is in the channel
      state = state_of(waiter);
      if (Clock::now() >= deadline) {
        std::erase(line_, waiter);
        throw Error(Errc::network, "the server is busy: still queued (position " + std::to_string(state.position) +
                                       ") after " + std::to_string(timeout.count() / 1000) + " s; retry later");
      }
    }
    co_await on_wait(state);
  }
}

void Admission::release() {
  std::lock_guard lock(mutex_);
  if (line_.empty()) {
    --active_;
    return;
  }
  // The slot passes straight to the first in line; active_ stays the same.
  auto next = line_.front();
  line_.pop_front();
  next->granted = true;
  next->admitted.try_send(boost::system::error_code{});
}

}  // namespace pxfer::server
