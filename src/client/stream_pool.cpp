#include "stream_pool.hpp"

#include <algorithm>

#include "pxfer/core/limits.hpp"

namespace pxfer {

void StreamPool::give(std::shared_ptr<net::Connection> conn, const Kind& kind) {
  std::shared_ptr<net::Connection> dropped;  // closed outside the lock
  std::lock_guard lock(mutex_);
  if (kept_.size() >= limits::idle_data_streams_kept) {
    dropped = std::move(kept_.front().conn);
    kept_.erase(kept_.begin());
  }
  kept_.push_back(Kept{std::move(conn), kind, std::chrono::steady_clock::now()});
}

std::shared_ptr<net::Connection> StreamPool::take(const Kind& kind) {
  std::vector<Kept> stale;
  std::shared_ptr<net::Connection> found;
  {
    std::lock_guard lock(mutex_);
    // Half the server's wait: a connection the server may be about to close is not worth a try.
    const auto oldest = std::chrono::steady_clock::now() - limits::idle_data_stream / 2;
    auto old_end = std::stable_partition(kept_.begin(), kept_.end(), [&](const Kept& k) { return k.since < oldest; });
    stale.assign(std::make_move_iterator(kept_.begin()), std::make_move_iterator(old_end));
    kept_.erase(kept_.begin(), old_end);
    for (auto it = kept_.rbegin(); it != kept_.rend(); ++it) {
      if (it->kind == kind) {
        found = std::move(it->conn);
        kept_.erase(std::next(it).base());
        break;
      }
    }
  }
  for (auto& k : stale) k.conn->close();
  return found;
}

std::size_t StreamPool::size() const {
  std::lock_guard lock(mutex_);
  return kept_.size();
}

}  // namespace pxfer
