#pragma once
// Data connections kept between the files of one client session (issue 12.3: one set of streams
// for a whole -r or --from-file run). A connection enters only after its stream ended cleanly
// (END both ways: nothing of the old transfer is left in flight on it) and leaves to carry the next
// file's stream, which says ATTACH again and proves the new transfer's key like a new connection
// would; pxferd serves ATTACHes on it one after the other (server/control_session.cpp).
#include "pxfer/client/layer.hpp"
#include <chrono>
#include <memory>
#include <mutex>
#include <vector>

#include "net/connection.hpp"
#include "pxfer/io/socket_tuning.hpp"

namespace pxfer {

class StreamPool {
 public:
  // What a kept connection was made for: only a stream that would have been made the same way
  // takes it (TLS or clear, the same buffers and congestion control).
  struct Kind {
    bool tls = false;
    SocketTuning tuning;
    bool operator==(const Kind&) const = default;
  };
  // Keeps `conn` (the oldest kept one goes when the pool is full).
  void give(std::shared_ptr<net::Connection> conn, const Kind& kind);
  // The most recently kept connection of `kind` that has not been idle too long
  // (limits::idle_data_stream), or null. Connections idle longer are dropped (closed) here.
  std::shared_ptr<net::Connection> take(const Kind& kind);
  std::size_t size() const;

 private:
  struct Kept {
    std::shared_ptr<net::Connection> conn;
    Kind kind;
    std::chrono::steady_clock::time_point since;
  };
  mutable std::mutex mutex_;
  std::vector<Kept> kept_;
};

}  // namespace pxfer
