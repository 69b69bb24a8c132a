#include "early_streams.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <spdlog/spdlog.h>

namespace pxfer {

namespace asio = boost::asio;

std::shared_ptr<EarlyStreams> EarlyStreams::start(asio::io_context& ioc, const ControlLink& link,
                                                  const ClientOptions& opt, const StreamPool::Kind& kind,
                                                  std::uint16_t count) {
  std::shared_ptr<EarlyStreams> early(new EarlyStreams(std::make_shared<const ControlLink>(link), opt, kind));
  for (std::uint16_t i = 0; i < count; ++i) early->slots_.push_back(std::make_unique<Slot>(asio::make_strand(ioc)));
  // The slots are all in place before the first connect runs: none is added later.
  for (std::uint16_t i = 0; i < count; ++i)
    asio::co_spawn(early->slots_[i]->strand, connect(early, i), asio::detached);
  return early;
}

asio::any_io_executor EarlyStreams::executor(std::uint16_t i) const { return slots_.at(i)->strand; }

// Any failure only leaves the slot empty: the stream that takes it connects itself and reports
// what it meets then, once, under its own retry policy.
net::awaitable<void> EarlyStreams::connect(std::shared_ptr<EarlyStreams> self, std::uint16_t i) {
  Slot& slot = *self->slots_[i];
  const ControlLink& link = *self->link_;
  try {
    auto socket = co_await connect_socket(slot.strand, link.data_endpoints, self->kind_.tuning, self->opt_.connect_timeout,
                                          link.authority, nullptr);
    slot.conn = co_await open_data_connection(socket, self->kind_.tls, link);
  } catch (const std::exception& e) {
    spdlog::debug("early data connection {} to {}: {}", i, link.authority, e.what());
    slot.conn.reset();
  }
  slot.done = true;
  self->settle(slot);
}

void EarlyStreams::settle(Slot& slot) {
  if (!slot.done) return;
  if (slot.taken) {
    slot.ready.cancel();
  } else if (slot.released && slot.conn) {
    link_->idle_streams->give(std::move(slot.conn), kind_);
  }
}

net::awaitable<std::shared_ptr<net::Connection>> EarlyStreams::take(std::uint16_t i) {
  auto self = shared_from_this();
  Slot& slot = *slots_.at(i);
  slot.taken = true;
  if (!slot.done) {
    slot.ready.expires_at(asio::steady_timer::time_point::max());
    co_await slot.ready.async_wait(asio::as_tuple(asio::use_awaitable));  // cancelled by settle()
  }
  co_return std::move(slot.conn);
}

void EarlyStreams::release(std::uint16_t from) {
  for (std::size_t i = from; i < slots_.size(); ++i)
    asio::post(slots_[i]->strand, [self = shared_from_this(), slot = slots_[i].get()] {
      slot->released = true;
      self->settle(*slot);
    });
}

}  // namespace pxfer
