#pragma once
// The space one identity's unfinished puts may claim together (--max-unfinished-per-identity):
// each put counts its claimed size from admission to its end, and an OPEN that would pass the cap
// is refused with what is held and what to do (issue 34: claims are cheap to make, space is not).
#include "pxfer/server/layer.hpp"
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include "pxfer/common/error.hpp"

namespace pxfer::server {

class UnfinishedSpace {
  struct State {
    std::mutex mutex;
    std::map<std::string, std::uint64_t> held;  // identities with unfinished puts
  };

 public:
  explicit UnfinishedSpace(std::uint64_t cap) : state_(std::make_shared<State>()), cap_(cap) {}

  // Held while the put runs; gives its bytes back when it goes.
  class Claim {
   public:
    Claim() = default;
    Claim(Claim&& o) noexcept : state_(std::move(o.state_)), identity_(std::move(o.identity_)), bytes_(o.bytes_) {}
    Claim& operator=(Claim&& o) noexcept {
      std::swap(state_, o.state_);
      std::swap(identity_, o.identity_);
      std::swap(bytes_, o.bytes_);
      return *this;
    }
    ~Claim() {
      if (!state_) return;
      std::lock_guard lock(state_->mutex);
      auto it = state_->held.find(identity_);
      if (it != state_->held.end() && (it->second -= bytes_) == 0) state_->held.erase(it);
    }

   private:
    friend class UnfinishedSpace;
    std::shared_ptr<State> state_;
    std::string identity_;
    std::uint64_t bytes_ = 0;
  };

  // Counts `bytes` for `identity`, or throws Error(local_io) when that would pass the cap.
  Claim take(const std::string& identity, std::uint64_t bytes, const std::string& path) {
    Claim claim;
    if (cap_ == 0 || bytes == 0) return claim;
    std::lock_guard lock(state_->mutex);
    std::uint64_t& held = state_->held[identity];
    if (bytes > cap_ || held > cap_ - bytes) {
      const std::uint64_t now = held;
      if (held == 0) state_->held.erase(identity);
      throw Error(Errc::local_io, path + ": identity " + identity + " holds " + std::to_string(now) +
                                      " bytes in unfinished puts; " + std::to_string(bytes) +
                                      " more would pass this server's --max-unfinished-per-identity of " +
                                      std::to_string(cap_) + " bytes (let those finish, or ask its operator)");
    }
    held += bytes;
    claim.state_ = state_;
    claim.identity_ = identity;
    claim.bytes_ = bytes;
    return claim;
  }

  // `bytes` more for a claim that grows with its file (a streamed write, stream_files.hpp: its size is
  // known only as its bytes come), or throws as take() does; the claim is unchanged then.
  void grow(Claim& claim, const std::string& identity, std::uint64_t bytes, const std::string& path) {
    Claim more = take(identity, bytes, path);
    if (!more.state_) return;
    if (!claim.state_) {
      claim = std::move(more);
      return;
    }
    claim.bytes_ += std::exchange(more.bytes_, 0);  // `more` gives nothing back when it goes
  }

 private:
  std::shared_ptr<State> state_;
  const std::uint64_t cap_;
};

}  // namespace pxfer::server
