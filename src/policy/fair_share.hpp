#pragma once
// Which waiting job a free worker of pxferd's blocking pool starts next (server/blocking_pool.hpp),
// with no threads and no I/O so that the order can be tested as it is. Every identity has a queue
// of its own and the identities take turns, one job each. An identity that already runs a job may
// start another only while more than `kept_free` workers stay free: those few are kept for an
// identity with nothing running, so two identities' long SUMs never make a third one's LIST wait
// for them to end (issue 34: it waited 33.8 s).
#include "pxfer/core/layer.hpp"
#include <cstddef>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <utility>

namespace pxfer::policy {

template <class Job>
class FairShare {
 public:
  FairShare(unsigned workers, unsigned kept_free) : workers_(workers), kept_free_(kept_free) {}

  void push(const std::string& identity, Job job) {
    Queue& q = queues_[identity];
    if (q.jobs.empty()) turn_.push_back(identity);
    q.jobs.push_back(std::move(job));
    ++waiting_;
  }

  // The identity and job a free worker starts now, or nothing: no job waits, no worker is free,
  // or each identity with a job waiting runs one already and only the kept workers are free.
  std::optional<std::pair<std::string, Job>> start() {
    if (running_ >= workers_) return std::nullopt;
    const unsigned free = workers_ - running_;
    for (auto it = turn_.begin(); it != turn_.end(); ++it) {
      Queue& q = queues_[*it];
      if (q.running > 0 && free <= kept_free_) continue;
      std::pair<std::string, Job> next{*it, std::move(q.jobs.front())};
      q.jobs.pop_front();
      ++q.running;
      ++running_;
      --waiting_;
      turn_.erase(it);
      if (!q.jobs.empty()) turn_.push_back(next.first);  // its next job after everyone else's
      return next;
    }
    return std::nullopt;
  }

  // A job of `identity` that start() gave out has ended.
  void finish(const std::string& identity) {
    auto it = queues_.find(identity);
    if (it == queues_.end() || it->second.running == 0) return;
    --it->second.running;
    --running_;
    if (it->second.running == 0 && it->second.jobs.empty()) queues_.erase(it);
  }

  std::size_t waiting() const { return waiting_; }
  unsigned running() const { return running_; }

 private:
  struct Queue {
    std::deque<Job> jobs;
    unsigned running = 0;
  };
  const unsigned workers_;
  const unsigned kept_free_;
  std::map<std::string, Queue> queues_;  // identities with jobs running or waiting
  std::deque<std::string> turn_;         // identities with jobs waiting, next first
  unsigned running_ = 0;
  std::size_t waiting_ = 0;
};

}  // namespace pxfer::policy
