#include "link_model.hpp"

#include <algorithm>
#include <cmath>

namespace wanem {

LinkModel::LinkModel(const LinkParams& params, std::uint64_t seed) : params_(params), random_(seed) {
  if (params_.loss_fraction >= 1.0) {
    always_lose_ = true;
  } else if (params_.loss_fraction > 0) {
    loss_threshold_ = static_cast<std::uint64_t>(std::ldexp(params_.loss_fraction, 64));
  }
  if (params_.rate_bps > 0 && params_.queue.unit == QueueLimit::Unit::kPackets) {
    departures_.resize(params_.queue.value);
  }
}

Verdict LinkModel::admit(Nanos now, std::size_t length, Nanos& release_at) {
  if (draw_loss()) return Verdict::kLost;
  if (params_.rate_bps == 0) {
    release_at = now + params_.delay;
    return Verdict::kForward;
  }
  if (queue_full(now, length)) return Verdict::kQueueFull;

  const Nanos departure = std::max(now, serializer_free_at_) + serialization_time(length);
  serializer_free_at_ = departure;
  if (!departures_.empty()) {
    departures_[(departures_head_ + departures_count_) % departures_.size()] = departure;
    ++departures_count_;
  }
  release_at = departure + params_.delay;
  return Verdict::kForward;
}

bool LinkModel::draw_loss() {
  if (always_lose_) return true;
  // No draw at all without loss, so a seed gives the same losses whatever else is set.
  return loss_threshold_ != 0 && random_() < loss_threshold_;
}

bool LinkModel::queue_full(Nanos now, std::size_t length) {
  if (params_.queue.unit == QueueLimit::Unit::kPackets) {
    while (departures_count_ > 0 && departures_[departures_head_] <= now) {
      departures_head_ = (departures_head_ + 1) % departures_.size();
      --departures_count_;
    }
    return departures_count_ >= params_.queue.value;
  }
  // Bytes not yet sent follow from the serialiser's schedule. An empty queue always
  // takes a packet, even one larger than the limit.
  if (serializer_free_at_ <= now) return false;
  const double backlog_bytes =
      static_cast<double>(serializer_free_at_ - now) * static_cast<double>(params_.rate_bps) / 8e9;
  return backlog_bytes + static_cast<double>(length) > static_cast<double>(params_.queue.value);
}

Nanos LinkModel::serialization_time(std::size_t length) {
  // length * 8 bits * 1e9 ns/s fits in 64 bits for any IP packet (< 2^16 bytes).
  const std::uint64_t numerator = static_cast<std::uint64_t>(length) * 8 * 1'000'000'000ULL + serialization_carry_;
  serialization_carry_ = numerator % params_.rate_bps;
  return static_cast<Nanos>(numerator / params_.rate_bps);
}

}  // namespace wanem
