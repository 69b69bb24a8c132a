#pragma once
// Data connections opened while OPEN crosses the path. Every round trip before the first block is
// time no stream wins back on a long path (150 ms each): made after OPEN_OK, a stream's TCP
// handshake (and TLS under --encrypt) would come after OPEN's round trip instead of beside it.
// A stream takes its slot's connection, waiting if it is still being made, and says ATTACH on it
// as on a kept one (pxferd serves a fresh connection and a kept one alike). Those no stream takes
// go to the session's pool (stream_pool.hpp) as they complete: a stream -p auto adds, or the
// session's next file, takes them there; the pool closes them with the session.
#include "pxfer/client/layer.hpp"
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <cstdint>
#include <memory>
#include <vector>

#include "connect.hpp"
#include "stream_pool.hpp"

namespace pxfer {

class EarlyStreams : public std::enable_shared_from_this<EarlyStreams> {
 public:
  // Starts `count` connects to the link's data endpoints, each on a strand of its own.
  static std::shared_ptr<EarlyStreams> start(boost::asio::io_context& ioc, const ControlLink& link,
                                             const ClientOptions& opt, const StreamPool::Kind& kind,
                                             std::uint16_t count);

  std::uint16_t count() const { return static_cast<std::uint16_t>(slots_.size()); }
  // The strand slot i's connection belongs to: stream i runs there.
  boost::asio::any_io_executor executor(std::uint16_t i) const;
  // Slot i's connection once its connect ended; null when it failed (the stream then connects
  // itself and meets the error). Only on executor(i), once per slot.
  net::awaitable<std::shared_ptr<net::Connection>> take(std::uint16_t i);
  // No stream will take slot `from` or a later one: each goes to the pool as its connect ends.
  // Once more with 0 as the job ends (taken slots are left alone): a refused OPEN, a failure.
  void release(std::uint16_t from = 0);

 private:
  using Strand = boost::asio::strand<boost::asio::io_context::executor_type>;
  // Touched only on its strand.
  struct Slot {
    explicit Slot(Strand s) : strand(s), ready(s) {}
    Strand strand;
    boost::asio::steady_timer ready;  // cancelled when the connect ends
    std::shared_ptr<net::Connection> conn;
    bool done = false, taken = false, released = false;
  };
  EarlyStreams(std::shared_ptr<const ControlLink> link, ClientOptions opt, StreamPool::Kind kind)
      : link_(std::move(link)), opt_(std::move(opt)), kind_(std::move(kind)) {}
  // `self` in the coroutine's frame from its creation: the slots outlive every coroutine that
  // touches them, whoever drops the last other owner first.
  static net::awaitable<void> connect(std::shared_ptr<EarlyStreams> self, std::uint16_t i);
  void settle(Slot& slot);  // on the slot's strand: the connection to its taker or the pool

  std::shared_ptr<const ControlLink> link_;
  ClientOptions opt_;
  StreamPool::Kind kind_;
  std::vector<std::unique_ptr<Slot>> slots_;
};

}  // namespace pxfer
