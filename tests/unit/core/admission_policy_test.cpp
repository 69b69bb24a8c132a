// pxferd's admission rules without any I/O: fairness between client addresses, the per-client
// stream limit, the client limit and the pacing of starts, on a fake clock.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "policy/admission_policy.hpp"

namespace pxfer::server {
namespace {

using Id = AdmissionPolicy::Id;
using namespace std::chrono_literals;
const AdmissionPolicy::TimePoint t0{};

std::vector<Id> ids(const std::vector<AdmissionPolicy::Grant>& grants) {
  std::vector<Id> out;
  for (const auto& g : grants) out.push_back(g.id);
  return out;
}

// Runs the queue to the end, one transfer at a time (each granted one is released before the
// next dispatch), and returns the order of admission.
std::vector<Id> drain_one_at_a_time(AdmissionPolicy& p, AdmissionPolicy::TimePoint now = t0) {
  std::vector<Id> order;
  for (;;) {
    auto grants = p.dispatch(now);
    if (grants.empty()) break;
    for (const auto& g : grants) {
      order.push_back(g.id);
      p.release(g.id);
    }
  }
  return order;
}

TEST(AdmissionPolicy, NoLimitsAdmitsEveryoneAtOnce) {
  AdmissionPolicy p({});
  for (Id i = 1; i <= 5; ++i) ASSERT_FALSE(p.enqueue(i, {"10.0.0.1", 8, true}));
  auto grants = p.dispatch(t0);
  ASSERT_EQ(grants.size(), 5u);
  for (const auto& g : grants) EXPECT_EQ(g.streams, 8u);
  EXPECT_EQ(p.active(), 5u);
  EXPECT_EQ(p.queued(), 0u);
}

TEST(AdmissionPolicy, OneClientIsFirstComeFirstServed) {
  AdmissionPolicy p({.max_active = 1});
  for (Id i = 1; i <= 4; ++i) p.enqueue(i, {"a", 1, true});
  EXPECT_EQ(drain_one_at_a_time(p), (std::vector<Id>{1, 2, 3, 4}));
}

TEST(AdmissionPolicy, ManyFilesOfOneClientDoNotStarveAnothersSingleFile) {
  AdmissionPolicy p({.max_active = 1});
  for (Id i = 1; i <= 100; ++i) p.enqueue(i, {"client-a", 2, true});
  ASSERT_EQ(ids(p.dispatch(t0)), (std::vector<Id>{1}));  // a's first runs
  p.enqueue(1000, {"client-b", 1, true});                 // b arrives with one file
  EXPECT_EQ(p.position(1000), 1u) << "b was never served: it goes next";
  EXPECT_EQ(p.position(2), 2u);
  p.release(1);
  EXPECT_EQ(ids(p.dispatch(t0)), (std::vector<Id>{1000}));
}

TEST(AdmissionPolicy, WaitingClientsAreServedRoundRobin) {
  AdmissionPolicy p({.max_active = 1});
  // a queues three, b two, c one, all before anything starts.
  p.enqueue(1, {"a", 1, true});
  p.enqueue(2, {"a", 1, true});
  p.enqueue(3, {"a", 1, true});
  p.enqueue(4, {"b", 1, true});
  p.enqueue(5, {"b", 1, true});
  p.enqueue(6, {"c", 1, true});
  // Predicted positions match the order actually served.
  std::vector<unsigned> predicted;
  for (Id i = 1; i <= 6; ++i) predicted.push_back(p.position(i));
  EXPECT_EQ(predicted, (std::vector<unsigned>{1, 4, 6, 2, 5, 3}));
  EXPECT_EQ(drain_one_at_a_time(p), (std::vector<Id>{1, 4, 6, 2, 5, 3}));
}

TEST(AdmissionPolicy, PositionsAreAPermutation) {
  AdmissionPolicy p({.max_active = 1});
  Id id = 0;
  for (int round = 0; round < 7; ++round)
    for (const char* c : {"x", "y", "z"})
      if (round < (c[0] - 'w') * 2) p.enqueue(++id, {c, 1, true});
  ASSERT_EQ(p.dispatch(t0).size(), 1u);  // x's first runs: x goes to the back
  std::vector<unsigned> seen(p.queued() + 1, 0);
  for (Id i = 1; i <= id; ++i)
    if (auto pos = p.position(i)) {
      ASSERT_LE(pos, p.queued());
      ++seen[pos];
    }
  for (unsigned pos = 1; pos <= p.queued(); ++pos) EXPECT_EQ(seen[pos], 1u) << pos;
}

TEST(AdmissionPolicy, StreamsPerClientAreLoweredThenQueued) {
  AdmissionPolicy p({.max_streams_per_client = 4});
  p.enqueue(1, {"a", 8, true});
  p.enqueue(2, {"a", 8, true});
  p.enqueue(3, {"b", 3, true});
  auto grants = p.dispatch(t0);
  ASSERT_EQ(grants.size(), 2u);  // a's first with 4 of its 8, b's with its 3; a's second waits
  EXPECT_EQ(grants[0].id, 1u);
  EXPECT_EQ(grants[0].streams, 4u);
  EXPECT_EQ(grants[1].id, 3u);
  EXPECT_EQ(grants[1].streams, 3u);
  EXPECT_EQ(p.streams_of("a"), 4u);
  EXPECT_EQ(p.position(2), 1u);
  EXPECT_TRUE(p.dispatch(t0).empty());
  p.release(1);
  grants = p.dispatch(t0);
  ASSERT_EQ(grants.size(), 1u);
  EXPECT_EQ(grants[0].id, 2u);
  EXPECT_EQ(grants[0].streams, 4u);
}

TEST(AdmissionPolicy, WhatIsLeftOfAClientsStreamsIsGranted) {
  AdmissionPolicy p({.max_streams_per_client = 4});
  p.enqueue(1, {"a", 3, true});
  p.enqueue(2, {"a", 3, true});
  auto grants = p.dispatch(t0);
  ASSERT_EQ(grants.size(), 2u);
  EXPECT_EQ(grants[1].streams, 1u);
  EXPECT_EQ(p.streams_of("a"), 4u);
}

TEST(AdmissionPolicy, APeerThatCannotTakeFewerStreamsWaitsForAllOrRunsAlone) {
  AdmissionPolicy p({.max_streams_per_client = 4});
  p.enqueue(1, {"a", 2, false});
  p.enqueue(2, {"a", 3, false});  // 2 + 3 > 4: waits
  p.enqueue(3, {"b", 8, false});  // over the limit alone: runs alone with all 8
  auto grants = p.dispatch(t0);
  ASSERT_EQ(grants.size(), 2u);
  EXPECT_EQ(grants[0].id, 1u);
  EXPECT_EQ(grants[1].id, 3u);
  EXPECT_EQ(grants[1].streams, 8u);
  p.release(1);
  grants = p.dispatch(t0);
  ASSERT_EQ(grants.size(), 1u);
  EXPECT_EQ(grants[0].streams, 3u);
}

TEST(AdmissionPolicy, AClientWaitingForItsStreamsDoesNotHoldBackOthers) {
  AdmissionPolicy p({.max_active = 3, .max_streams_per_client = 2});
  p.enqueue(1, {"a", 2, true});
  p.enqueue(2, {"a", 2, true});
  p.enqueue(3, {"b", 2, true});
  EXPECT_EQ(ids(p.dispatch(t0)), (std::vector<Id>{1, 3}));
  EXPECT_EQ(p.active(), 2u);
  EXPECT_EQ(p.queued(), 1u);
}

TEST(AdmissionPolicy, MaxClientsRefusesANewAddressOnly) {
  AdmissionPolicy p({.max_active = 1, .max_clients = 2});
  EXPECT_FALSE(p.enqueue(1, {"a", 1, true}));
  EXPECT_FALSE(p.enqueue(2, {"b", 1, true}));  // queued counts as well as running
  EXPECT_FALSE(p.enqueue(3, {"a", 1, true}));  // a known address may queue more
  auto refusal = p.enqueue(4, {"c", 1, true});
  ASSERT_TRUE(refusal);
  EXPECT_EQ(*refusal, "server busy: 2 clients connected; retry later");
  EXPECT_EQ(p.queued(), 3u);
  // Once a's transfers are gone, c fits.
  EXPECT_EQ(drain_one_at_a_time(p), (std::vector<Id>{1, 2, 3}));
  EXPECT_EQ(p.clients(), 0u);
  EXPECT_FALSE(p.enqueue(5, {"c", 1, true}));
}

TEST(AdmissionPolicy, CancelledRequestsLeaveTheLineAndFreeTheirClient) {
  AdmissionPolicy p({.max_active = 1, .max_clients = 1});
  p.enqueue(1, {"a", 1, true});
  p.dispatch(t0);
  EXPECT_TRUE(p.enqueue(2, {"b", 1, true}));  // refused: a holds the only client place
  p.enqueue(3, {"a", 1, true});
  EXPECT_TRUE(p.cancel(3));
  EXPECT_FALSE(p.cancel(3));
  EXPECT_FALSE(p.cancel(1));  // running, not waiting
  EXPECT_EQ(p.queued(), 0u);
  p.release(1);
  EXPECT_EQ(p.clients(), 0u);
  EXPECT_FALSE(p.enqueue(4, {"b", 1, true}));
}

TEST(AdmissionPolicy, StartsArePacedOneEveryIntervalWithoutBurst) {
  AdmissionPolicy p({.max_starts_per_second = 2});
  for (Id i = 1; i <= 6; ++i) p.enqueue(i, {"a", 1, true});
  std::vector<double> started;
  for (auto now = t0; now <= t0 + 5s && p.queued() > 0; now += 10ms)
    for (const auto& g : p.dispatch(now)) {
      (void)g;
      started.push_back(std::chrono::duration<double>(now - t0).count());
    }
  ASSERT_EQ(started.size(), 6u);
  for (std::size_t i = 0; i < started.size(); ++i) EXPECT_NEAR(started[i], 0.5 * static_cast<double>(i), 0.011) << i;
}

TEST(AdmissionPolicy, PacingSaysWhenTheNextStartIsAllowed) {
  AdmissionPolicy p({.max_starts_per_second = 4});
  p.enqueue(1, {"a", 1, true});
  p.enqueue(2, {"a", 1, true});
  EXPECT_EQ(p.dispatch(t0).size(), 1u);
  auto wait = p.next_start_in(t0 + 100ms);
  ASSERT_TRUE(wait);
  EXPECT_EQ(std::chrono::duration_cast<std::chrono::milliseconds>(*wait).count(), 150);
  EXPECT_TRUE(p.dispatch(t0 + 200ms).empty());
  EXPECT_EQ(p.dispatch(t0 + 250ms).size(), 1u);
  EXPECT_FALSE(p.next_start_in(t0 + 250ms)) << "nobody waits";
}

TEST(AdmissionPolicy, AnIdleSpellDoesNotBankStarts) {
  AdmissionPolicy p({.max_starts_per_second = 1});
  p.enqueue(1, {"a", 1, true});
  EXPECT_EQ(p.dispatch(t0).size(), 1u);
  for (Id i = 2; i <= 4; ++i) p.enqueue(i, {"a", 1, true});
  EXPECT_EQ(p.dispatch(t0 + 60s).size(), 1u);  // a minute idle still allows one start, not sixty
  EXPECT_TRUE(p.dispatch(t0 + 60s + 999ms).empty());
  EXPECT_EQ(p.dispatch(t0 + 61s).size(), 1u);
}

TEST(AdmissionPolicy, PacingAndMaxActiveTogether) {
  AdmissionPolicy p({.max_active = 1, .max_starts_per_second = 10});
  p.enqueue(1, {"a", 1, true});
  p.enqueue(2, {"b", 1, true});
  EXPECT_EQ(ids(p.dispatch(t0)), (std::vector<Id>{1}));
  p.release(1);
  EXPECT_TRUE(p.dispatch(t0 + 50ms).empty()) << "a free slot, but too soon";
  EXPECT_EQ(ids(p.dispatch(t0 + 100ms)), (std::vector<Id>{2}));
}

}  // namespace
}  // namespace pxfer::server
