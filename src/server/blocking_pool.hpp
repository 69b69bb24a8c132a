#pragma once
// Work that may block (reading a whole file for SUM, walking a tree for LIST, opening a file that
// could sit on a slow disk) runs here, on a few threads of its own, never on the threads that
// run the network: one client's expensive request must not delay another client's handshake.
// The coroutine that asked waits for the result and resumes on its own executor.
#include "pxfer/server/layer.hpp"
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "net/connection.hpp"
#include "policy/fair_share.hpp"

namespace pxfer::server {

// The pool's threads share themselves fairly between identities (policy/fair_share.hpp): each
// identity waits in a queue of its own, the queues take turns, and limits::blocking_workers_kept_free
// threads beyond `threads` are kept for an identity with nothing running.
class BlockingPool {
 public:
  explicit BlockingPool(unsigned threads);
  ~BlockingPool();  // runs what is queued, then joins (cancellable work watches the server's stopping flag)
  BlockingPool(const BlockingPool&) = delete;
  BlockingPool& operator=(const BlockingPool&) = delete;

  // Runs `work` on a pool thread, in `identity`'s turn; resumes the caller on its own executor
  // once it is done, and rethrows what `work` threw.
  net::awaitable<void> run(std::function<void()> work, const std::string& identity = {});

 private:
  void enqueue(const std::string& identity, std::function<void()> job);
  void work();
  std::mutex mutex_;
  std::condition_variable wake_;
  policy::FairShare<std::function<void()>> queue_;  // under mutex_
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

// At most `per_identity` SUM/LIST requests of one identity run at once (limits.hpp); a request
// over the limit waits for one of its own to finish, so an identity that floods the server only
// delays itself, and the pool stays free for everyone else.
class IdentityGate {
 public:
  explicit IdentityGate(unsigned per_identity) : per_identity_(per_identity) {}
  IdentityGate(const IdentityGate&) = delete;
  IdentityGate& operator=(const IdentityGate&) = delete;

  struct Slots;
  // Held while the request runs; the destructor lets the next one of the same identity in.
  class Permit {
   public:
    Permit(IdentityGate* gate, std::string identity, std::shared_ptr<Slots> slots)
        : gate_(gate), identity_(std::move(identity)), slots_(std::move(slots)) {}
    Permit(Permit&& other) noexcept;
    Permit& operator=(Permit&&) = delete;
    Permit(const Permit&) = delete;
    ~Permit();

   private:
    IdentityGate* gate_;
    std::string identity_;
    std::shared_ptr<Slots> slots_;
    bool held_ = false;  // got its place (not only waited for one)
    friend class IdentityGate;
  };
  net::awaitable<Permit> enter(const std::string& identity);

 private:
  void leave(const std::string& identity, const std::shared_ptr<Slots>& slots, bool held) noexcept;
  const unsigned per_identity_;
  std::mutex mutex_;
  std::map<std::string, std::shared_ptr<Slots>> slots_;  // only identities with requests running or waiting
};

}  // namespace pxfer::server
