#include "policy/admission_policy.hpp"

#include <algorithm>

#include "pxfer/core/stream_count.hpp"
#include <tuple>

namespace pxfer::server {

std::optional<std::string> AdmissionPolicy::enqueue(Id id, Request request) {
  if (limits_.max_clients != 0 && !clients_.contains(request.client) && clients_.size() >= limits_.max_clients)
    return "server busy: " + std::to_string(clients_.size()) + " clients connected; retry later";
  request.streams = std::max(1u, request.streams);
  auto& c = clients_[request.client];
  c.line.push_back(Waiting{id, std::move(request), ++arrivals_});
  ++queued_count_;
  return std::nullopt;
}

unsigned AdmissionPolicy::grantable(const Client& c) const {
  if (c.line.empty()) return 0;
  const Request& head = c.line.front().request;
  return admitted_streams(head.streams, head.can_lower, limits_.max_streams_per_client, c.streams);
}

std::vector<AdmissionPolicy::Grant> AdmissionPolicy::dispatch(TimePoint now) {
  std::vector<Grant> grants;
  while (queued_count_ > 0) {
    if (limits_.max_active != 0 && active_count_ >= limits_.max_active) break;
    const bool paced = limits_.max_starts_per_second > 0;
    if (paced && next_start_ && now < *next_start_) break;
    // The eligible client served least recently; among equals, whose head came first.
    std::map<std::string, Client>::iterator best = clients_.end();
    unsigned best_streams = 0;
    for (auto it = clients_.begin(); it != clients_.end(); ++it) {
      unsigned g = grantable(it->second);
      if (g == 0) continue;
      if (best == clients_.end() ||
          std::tuple(it->second.last_served, it->second.line.front().arrival) <
              std::tuple(best->second.last_served, best->second.line.front().arrival)) {
        best = it;
        best_streams = g;
      }
    }
    if (best == clients_.end()) break;
    Client& c = best->second;
    Id id = c.line.front().id;
    c.line.erase(c.line.begin());
    --queued_count_;
    ++c.active;
    c.streams += best_streams;
    c.last_served = ++services_;
    ++active_count_;
    running_[id] = Running{best->first, best_streams};
    if (paced) {
      auto interval = std::chrono::duration_cast<Clock::duration>(
          std::chrono::duration<double>(1.0 / limits_.max_starts_per_second));
      next_start_ = std::max(next_start_.value_or(now), now) + interval;
    }
    grants.push_back(Grant{id, best_streams});
  }
  return grants;
}

bool AdmissionPolicy::cancel(Id id) {
  for (auto& [key, c] : clients_) {
    auto it = std::find_if(c.line.begin(), c.line.end(), [id](const Waiting& w) { return w.id == id; });
    if (it == c.line.end()) continue;
    c.line.erase(it);
    --queued_count_;
    forget_if_idle(std::string(key));  // a copy: forgetting erases the key
    return true;
  }
  return false;
}

void AdmissionPolicy::release(Id id) {
  auto it = running_.find(id);
  if (it == running_.end()) return;
  auto c = clients_.find(it->second.client);
  if (c != clients_.end()) {
    --c->second.active;
    c->second.streams -= std::min(c->second.streams, it->second.streams);
  }
  std::string client = it->second.client;
  running_.erase(it);
  --active_count_;
  forget_if_idle(client);
}

void AdmissionPolicy::forget_if_idle(const std::string& client) {
  auto it = clients_.find(client);
  if (it != clients_.end() && it->second.active == 0 && it->second.line.empty()) clients_.erase(it);
}

std::vector<const AdmissionPolicy::Client*> AdmissionPolicy::service_order() const {
  std::vector<const Client*> order;
  for (const auto& [key, c] : clients_)
    if (!c.line.empty()) order.push_back(&c);
  std::sort(order.begin(), order.end(), [](const Client* a, const Client* b) {
    return std::tuple(a->last_served, a->line.front().arrival) < std::tuple(b->last_served, b->line.front().arrival);
  });
  return order;
}

unsigned AdmissionPolicy::position(Id id) const {
  auto order = service_order();
  for (std::size_t ci = 0; ci < order.size(); ++ci) {
    const auto& line = order[ci]->line;
    for (std::size_t k = 0; k < line.size(); ++k) {
      if (line[k].id != id) continue;
      // Round k serves one of each client's line: everyone's first k, and the k+1-th of the
      // clients served before this one.
      std::size_t ahead = k;
      for (std::size_t d = 0; d < order.size(); ++d)
        if (d != ci) ahead += std::min(order[d]->line.size(), k + (d < ci ? 1 : 0));
      return static_cast<unsigned>(ahead + 1);
    }
  }
  return 0;
}

std::optional<AdmissionPolicy::Clock::duration> AdmissionPolicy::next_start_in(TimePoint now) const {
  if (limits_.max_starts_per_second <= 0 || queued_count_ == 0 || !next_start_ || now >= *next_start_)
    return std::nullopt;
  return *next_start_ - now;
}

unsigned AdmissionPolicy::streams_of(const std::string& client) const {
  auto it = clients_.find(client);
  return it == clients_.end() ? 0 : it->second.streams;
}

}  // namespace pxfer::server
