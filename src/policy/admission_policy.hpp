#pragma once
// Who starts next on pxferd: the admission rules without any I/O, so they can be tested with a
// fake clock. Admission (admission.hpp) wraps this with a mutex, channels and timers.
//
// - max_active: at most N transfers move data at once.
// - max_streams_per_client: a client (its address) holds at most N data streams; a transfer that
//   asks for more than its client has left is granted fewer (when its peer can take a lower count),
//   and waits only when the client has none left.
// - max_clients: at most N distinct addresses with a running or waiting transfer; one more is
//   refused at once.
// - max_starts_per_second: admissions are paced, one every 1/R seconds (GCRA without burst).
// - Fairness: among waiting clients, the one served least recently goes first (a client never
//   served yet before everyone else); within a client, first come first served. One client with
//   100 files waiting does not hold back another client's single file.
#include "pxfer/core/layer.hpp"
#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace pxfer::server {

struct AdmissionLimits {
  unsigned max_active = 0;              // 0 = no limit
  unsigned max_streams_per_client = 0;  // 0 = no limit
  unsigned max_clients = 0;             // 0 = no limit
  double max_starts_per_second = 0;     // 0 = no pacing
  bool any() const {
    return max_active || max_streams_per_client || max_clients || max_starts_per_second > 0;
  }
};

class AdmissionPolicy {
 public:
  using Id = std::uint64_t;
  using Clock = std::chrono::steady_clock;
  using TimePoint = Clock::time_point;

  struct Request {
    std::string client;       // the client's address
    unsigned streams = 1;     // asked for
    bool can_lower = true;    // the peer accepts fewer streams than it asked for
  };
  struct Grant {
    Id id = 0;
    unsigned streams = 0;
  };

  explicit AdmissionPolicy(AdmissionLimits limits) : limits_(limits) {}

  // Puts the request in line; the refusal text when max_clients is reached (nothing queued then).
  std::optional<std::string> enqueue(Id id, Request request);
  // Admits whoever may start at `now`, in the fairness order; each grant counts as active until
  // release(). Call after enqueue, release, and when next_start_in() has passed.
  std::vector<Grant> dispatch(TimePoint now);
  // Removes a request still waiting (queue timeout); false when it was granted or is unknown.
  bool cancel(Id id);
  // An admitted transfer ended: its slot and streams are free again.
  void release(Id id);

  // 1 = next to start, in the order dispatch() would serve if nothing else changed; 0 when `id`
  // is not waiting.
  unsigned position(Id id) const;
  // When pacing is what holds a waiting request back, how long until the next start is allowed.
  std::optional<Clock::duration> next_start_in(TimePoint now) const;

  unsigned active() const { return active_count_; }
  unsigned queued() const { return queued_count_; }
  unsigned clients() const { return static_cast<unsigned>(clients_.size()); }
  unsigned streams_of(const std::string& client) const;
  const AdmissionLimits& limits() const { return limits_; }

 private:
  struct Waiting {
    Id id;
    Request request;
    std::uint64_t arrival;  // global order of arrival
  };
  struct Client {
    std::vector<Waiting> line;  // first come first served within a client
    unsigned active = 0;
    unsigned streams = 0;
    std::uint64_t last_served = 0;  // 0 = never served
  };
  struct Running {
    std::string client;
    unsigned streams;
  };
  // Streams the head of `c`'s line would get now, 0 when it cannot start.
  unsigned grantable(const Client& c) const;
  // Clients with someone waiting, in the order they are served.
  std::vector<const Client*> service_order() const;
  void forget_if_idle(const std::string& client);

  AdmissionLimits limits_;
  std::map<std::string, Client> clients_;  // every client with a running or waiting transfer
  std::map<Id, Running> running_;
  unsigned active_count_ = 0;
  unsigned queued_count_ = 0;
  std::uint64_t arrivals_ = 0;
  std::uint64_t services_ = 0;
  std::optional<TimePoint> next_start_;  // pacing: earliest next admission
};

}  // namespace pxfer::server
