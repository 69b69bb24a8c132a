#include "pxfer/client/interrupt_watch.hpp"

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/signal_set.hpp>

#include <atomic>
#include <map>
#include <mutex>
#include <thread>

#include "pxfer/common/interruption.hpp"

namespace pxfer {

namespace asio = boost::asio;

namespace {

// The stops registered now, by id; run on the first interruption.
struct Stops {
  std::mutex mutex;
  std::mutex calling;  // held while stops run: a handle going away waits for its stop to return
  std::map<std::uint64_t, std::function<void()>> stops;
  std::uint64_t next = 0;
};
std::atomic<int> watches{0};

Stops& stops() {
  static Stops s;
  return s;
}

void run_stops() {
  std::lock_guard running(stops().calling);
  std::vector<std::function<void()>> calls;
  {
    std::lock_guard lock(stops().mutex);
    for (const auto& [id, stop] : stops().stops) calls.push_back(stop);
  }
  for (const auto& stop : calls) stop();  // outside the lock: a stop may unregister another
}

}  // namespace

struct InterruptWatch::Impl {
  asio::io_context ioc;
  asio::signal_set signals{ioc, SIGINT, SIGTERM};
  std::thread thread;

  void wait() {
    signals.async_wait([this](const boost::system::error_code& ec, int signo) {
      if (ec) return;
      const bool first = interruption_signal() == 0;
      note_interruption(signo);
      if (first) run_stops();
      wait();  // later signals are caught too: the first one's stops are ending the command
    });
  }
};

bool interrupt_watch_alive() noexcept { return watches.load() > 0; }

InterruptWatch::InterruptWatch() : impl_(std::make_unique<Impl>()) {
  ++watches;
  impl_->wait();
  impl_->thread = std::thread([impl = impl_.get()] { impl->ioc.run(); });
}

InterruptWatch::~InterruptWatch() {
  asio::post(impl_->ioc, [impl = impl_.get()] {
    boost::system::error_code ec;
    impl->signals.cancel(ec);
  });
  impl_->thread.join();
  --watches;
}

std::shared_ptr<void> on_interruption(std::function<void()> stop) {
  std::uint64_t id = 0;
  {
    std::lock_guard lock(stops().mutex);
    id = stops().next++;
    stops().stops.emplace(id, stop);
  }
  auto handle = std::shared_ptr<void>(nullptr, [id](void*) {
    {
      std::lock_guard lock(stops().mutex);
      stops().stops.erase(id);
    }
    std::lock_guard running(stops().calling);  // its stop may be running now: it uses what the owner frees next
  });
  if (interruption_signal() != 0) stop();  // it came before the registration
  return handle;
}

}  // namespace pxfer
