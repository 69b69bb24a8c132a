#pragma once
// A Prometheus histogram with fixed bucket bounds: lock-free to observe (one atomic add per
// bucket that holds the value, and one to the sum), read whole when scraped. The counts are
// cumulative as the exposition format wants them: bucket i counts observations <= bounds[i].
#include "pxfer/server/layer.hpp"
#include <array>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <string>

namespace pxfer::server {

template <std::size_t N>
class Histogram {
 public:
  explicit constexpr Histogram(std::array<double, N> bounds) : bounds_(bounds) {}

  // The count first and the buckets after, read in the other order: a scrape never shows a bucket
  // above +Inf.
  void observe(double value) {
    count_.fetch_add(1);
    for (std::size_t i = 0; i < N; ++i)
      if (value <= bounds_[i]) buckets_[i].fetch_add(1);
    sum_.fetch_add(value, std::memory_order_relaxed);
  }

  // The _bucket, _sum and _count samples of `name`; `labels` ("" or `a="b",`) goes before le.
  void append(std::string& out, const std::string& name, const std::string& labels) const {
    char le[32];
    std::array<std::uint64_t, N> counts;
    for (std::size_t i = 0; i < N; ++i) counts[i] = buckets_[i].load();
    const std::string count = std::to_string(count_.load());
    for (std::size_t i = 0; i < N; ++i) {
      // Whole bounds (bytes) exactly, fractions (seconds) as written.
      std::snprintf(le, sizeof le, bounds_[i] == static_cast<double>(static_cast<std::uint64_t>(bounds_[i])) ? "%.0f" : "%g",
                    bounds_[i]);
      out += name + "_bucket{" + labels + "le=\"" + le + "\"} " + std::to_string(counts[i]) + "\n";
    }
    out += name + "_bucket{" + labels + "le=\"+Inf\"} " + count + "\n";
    std::string plain;  // the labels without le, for _sum and _count (appended: g++ 12's -Wrestrict misfires on "{" + ...)
    if (!labels.empty()) {
      plain = "{";
      plain.append(labels, 0, labels.size() - 1);
      plain += '}';
    }
    std::snprintf(le, sizeof le, "%.6f", sum_.load(std::memory_order_relaxed));
    out += name + "_sum" + plain + " " + le + "\n";
    out += name + "_count" + plain + " " + count + "\n";
  }

 private:
  std::array<double, N> bounds_;
  std::array<std::atomic<std::uint64_t>, N> buckets_{};
  std::atomic<std::uint64_t> count_{0};
  std::atomic<double> sum_{0};
};

}  // namespace pxfer::server
