#include "pxfer/core/retry.hpp"

#include "pxfer/common/interruption.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <random>
#include <thread>

namespace pxfer {
namespace {

struct Rule {
  bool transfer;      // a new attempt of the whole transfer may succeed
  bool connection;    // a new connection may succeed
  bool keeps_partial; // the receiver keeps what it has for a resume
};

// The one table. Indexed by Errc; a class appended to Errc must be added here (static_assert below).
constexpr Rule rules[] = {
    /* ok          */ {false, false, false},
    /* internal    */ {true, false, true},    // may be a transient condition; the partial is intact
    /* usage       */ {false, false, false},
    /* not_found   */ {false, false, false},
    /* permission  */ {false, false, false},
    /* network     */ {true, true, true},
    /* protocol    */ {true, false, true},    // a garbled frame; a new control connection starts clean
    /* integrity   */ {true, false, false},   // a checksum mismatch: what was written is suspect
    /* local_io    */ {false, false, true},   // a full disk or an unreadable source does not cure itself
    /* exists      */ {false, false, false},
    /* interrupted */ {false, false, true},   // the user said stop; the same command resumes
};
static_assert(std::size(rules) == static_cast<std::size_t>(Errc::interrupted) + 1, "one rule per Errc");

const Rule* rule_of(Errc code) noexcept {
  const auto i = static_cast<std::size_t>(code);
  return i < std::size(rules) ? &rules[i] : nullptr;
}

}  // namespace

bool retryable(Errc code, RetryScope scope) noexcept {
  const Rule* r = rule_of(code);
  if (!r) return false;
  return scope == RetryScope::transfer ? r->transfer : r->connection;
}

bool keeps_partial(Errc code) noexcept {
  const Rule* r = rule_of(code);
  return r && r->keeps_partial;
}

std::chrono::milliseconds RetryPolicy::delay_before(unsigned next, double unit) const noexcept {
  if (next < 2) return std::chrono::milliseconds(0);
  // first_delay * 2^(next-2), capped; computed in double so a large `next` cannot overflow.
  double nominal = static_cast<double>(first_delay.count()) * std::pow(2.0, std::min(next - 2, 62u));
  nominal = std::min(nominal, static_cast<double>(max_delay.count()));
  const double factor = 1.0 - jitter + 2.0 * jitter * std::clamp(unit, 0.0, 1.0);
  return std::chrono::milliseconds(static_cast<std::int64_t>(std::llround(nominal * factor)));
}

std::optional<std::chrono::milliseconds> RetryCount::after_failure(Errc code, double unit) noexcept {
  ++failed_;
  if (failed_ > policy_.retries || !retryable(code, scope_)) return std::nullopt;
  return policy_.delay_before(failed_ + 1, unit);
}

unsigned with_retries(const RetryPolicy& policy, const std::function<void(unsigned)>& attempt,
                      const std::function<void(const RetryNotice&)>& on_failure) {
  const unsigned total = policy.retries + 1;
  RetryCount count(policy, RetryScope::transfer);
  std::optional<std::mt19937_64> random;  // seeded on the first retry: random_device is not free
  for (unsigned n = 1;; ++n) {
    std::optional<Error> failure;
    try {
      attempt(n);
      return n;
    } catch (const Error& e) {
      failure = e;
    } catch (const std::exception& e) {
      failure = Error(Errc::internal, e.what());
    }
    double unit = 0.5;
    if (policy.jitter > 0.0 && n < total) {
      if (!random) random.emplace(std::random_device{}());
      unit = std::uniform_real_distribution<double>(0.0, 1.0)(*random);
    }
    const auto pause = count.after_failure(failure->code(), unit);
    if (on_failure)
      on_failure(RetryNotice{*failure, n, total, pause ? n + 1 : 0, pause ? static_cast<double>(pause->count()) / 1000.0 : 0.0});
    if (!pause) throw *failure;
    // In slices: Ctrl-C ends the pause (and the command) within a few tens of ms (issue 34).
    const auto until = std::chrono::steady_clock::now() + *pause;
    for (auto now = std::chrono::steady_clock::now(); now < until && interruption_signal() == 0;
         now = std::chrono::steady_clock::now())
      std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(until - now, std::chrono::milliseconds(20)));
    throw_if_interrupted(std::string("no retry after: ") + failure->what());
  }
}

}  // namespace pxfer
