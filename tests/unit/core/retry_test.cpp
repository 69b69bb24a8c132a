// The one retry policy: which failures are tried again (the table), the pauses between attempts,
// and with_retries as every retrying caller uses it.
#include <gtest/gtest.h>

#include <vector>

#include "pxfer/core/retry.hpp"

namespace pxfer {
namespace {

TEST(RetryTable, TransfersAreRetriedOnlyForFailuresAnotherAttemptMayCure) {
  for (Errc code : {Errc::network, Errc::protocol, Errc::integrity, Errc::internal})
    EXPECT_TRUE(retryable(code, RetryScope::transfer)) << errc_name(code);
  for (Errc code : {Errc::ok, Errc::usage, Errc::not_found, Errc::permission, Errc::local_io, Errc::exists, Errc::interrupted})
    EXPECT_FALSE(retryable(code, RetryScope::transfer)) << errc_name(code);
}

TEST(RetryTable, ConnectionsAreReplacedOnlyAfterNetworkFailures) {
  for (int i = 0; i <= static_cast<int>(Errc::interrupted); ++i) {
    const auto code = static_cast<Errc>(i);
    EXPECT_EQ(retryable(code, RetryScope::connection), code == Errc::network) << errc_name(code);
  }
}

TEST(RetryTable, AnInterruptionKeepsThePartialFileForTheSameCommandToResume) {
  EXPECT_TRUE(keeps_partial(Errc::interrupted));
  EXPECT_TRUE(keeps_partial(Errc::network));
  EXPECT_TRUE(keeps_partial(Errc::local_io));
  EXPECT_FALSE(keeps_partial(Errc::integrity)) << "a checksum mismatch makes what was written suspect";
  EXPECT_FALSE(keeps_partial(Errc::exists));
  EXPECT_FALSE(keeps_partial(static_cast<Errc>(999)));
  EXPECT_FALSE(retryable(static_cast<Errc>(999), RetryScope::transfer));
}

TEST(RetryPolicy, PausesDoubleFromTheFirstDelayUpToTheCap) {
  RetryPolicy p{5, std::chrono::milliseconds(1000), std::chrono::milliseconds(5000), 0.5};
  EXPECT_EQ(p.delay_before(1, 0.5).count(), 0);
  EXPECT_EQ(p.delay_before(2, 0.5).count(), 1000);  // unit 0.5: the nominal value
  EXPECT_EQ(p.delay_before(3, 0.5).count(), 2000);
  EXPECT_EQ(p.delay_before(4, 0.5).count(), 4000);
  EXPECT_EQ(p.delay_before(5, 0.5).count(), 5000);
  EXPECT_EQ(p.delay_before(400, 0.5).count(), 5000) << "no overflow for a large attempt number";
  EXPECT_EQ(p.delay_before(2, 0.0).count(), 500);   // jitter: from half ...
  EXPECT_EQ(p.delay_before(2, 1.0).count(), 1500);  // ... to one and a half of it
}

TEST(RetryPolicy, StreamReconnectsGoFrom250msTo8sWithoutJitter) {
  const RetryPolicy& p = stream_reconnect_policy;
  EXPECT_EQ(p.retries, 5u);
  EXPECT_EQ(p.delay_before(2, 0.0).count(), 250);
  EXPECT_EQ(p.delay_before(2, 1.0).count(), 250);
  EXPECT_EQ(p.delay_before(7, 0.3).count(), 8000);
}

RetryPolicy instant(unsigned retries) { return RetryPolicy{retries, std::chrono::milliseconds(0), std::chrono::milliseconds(0), 0.5}; }

TEST(WithRetries, RetriesANetworkFailureAndSaysWhichAttemptFollows) {
  std::vector<unsigned> nexts;
  unsigned calls = 0;
  unsigned won = with_retries(instant(3), [&](unsigned n) {
    ++calls;
    EXPECT_EQ(n, calls);
    if (n < 3) throw Error(Errc::network, "cut");
  }, [&](const RetryNotice& r) { nexts.push_back(r.next); EXPECT_EQ(r.total, 4u); });
  EXPECT_EQ(won, 3u);
  EXPECT_EQ(nexts, (std::vector<unsigned>{2, 3}));
}

TEST(WithRetries, GivesUpAfterItsRetriesWithTheLastError) {
  std::vector<unsigned> nexts;
  try {
    with_retries(instant(2), [](unsigned n) { throw Error(Errc::network, "attempt " + std::to_string(n)); },
                 [&](const RetryNotice& r) { nexts.push_back(r.next); });
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "attempt 3");
  }
  EXPECT_EQ(nexts, (std::vector<unsigned>{2, 3, 0}));
}

TEST(WithRetries, AnInterruptedTransferIsNeverTriedAgain) {
  unsigned calls = 0;
  try {
    with_retries(instant(5), [&](unsigned) {
      ++calls;
      throw Error(Errc::interrupted, "interrupted by SIGINT");
    });
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::interrupted);
  }
  EXPECT_EQ(calls, 1u);
}

TEST(WithRetries, AFullDiskOrARefusalIsNotRetriedEither) {
  for (Errc code : {Errc::local_io, Errc::permission, Errc::exists, Errc::not_found, Errc::usage}) {
    unsigned calls = 0;
    EXPECT_THROW(with_retries(instant(5), [&](unsigned) { ++calls; throw Error(code, "no"); }), Error);
    EXPECT_EQ(calls, 1u) << errc_name(code);
  }
}

TEST(WithRetries, OtherExceptionsBecomeInternalErrors) {
  try {
    with_retries(instant(0), [](unsigned) { throw std::runtime_error("boom"); });
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::internal);
    EXPECT_STREQ(e.what(), "boom");
  }
}

// The data streams' count: five replacements in a row at 250 ms, 500 ms, ... no jitter; a
// replacement that moved data starts the count again; only a network failure is reconnected.
TEST(RetryCount, StreamReconnectsCountInARowAndStartAgainAfterProgress) {
  RetryCount count(stream_reconnect_policy, RetryScope::connection);
  std::vector<long> pauses;
  while (auto pause = count.after_failure(Errc::network, 0.9)) pauses.push_back(pause->count());
  EXPECT_EQ(pauses, (std::vector<long>{250, 500, 1000, 2000, 4000}));
  EXPECT_EQ(count.failed(), 6u);
  count.reset();
  ASSERT_TRUE(count.after_failure(Errc::network, 0.0).has_value());
  EXPECT_EQ(count.after_failure(Errc::network, 0.0)->count(), 500);
  EXPECT_FALSE(count.after_failure(Errc::protocol, 0.5).has_value()) << "not at connection scope";
}

TEST(RetryCount, TransferScopeFollowsTheTable) {
  RetryCount count(RetryPolicy{3, std::chrono::milliseconds(1000), std::chrono::milliseconds(60000), 0.5},
                   RetryScope::transfer);
  EXPECT_EQ(count.after_failure(Errc::integrity, 0.5)->count(), 1000);
  EXPECT_EQ(count.after_failure(Errc::protocol, 0.0)->count(), 1000);  // 2000 at half: jitter
  EXPECT_FALSE(count.after_failure(Errc::local_io, 0.5).has_value());
}

}  // namespace
}  // namespace pxfer
