// The client's one retry orchestrator (pxfer/client/retrying.hpp): attempt numbers, what stops at
// once, the notices a listener and a batch hear, the bound on the policy, and a pause that Ctrl-C
// ends; put_retrying against a port nobody listens on (a real refused connection).
#include <gtest/gtest.h>

#include <csignal>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

#include "pxfer/client/retrying.hpp"
#include "pxfer/common/interruption.hpp"

namespace pxfer {
namespace {

using namespace std::chrono_literals;

RetryPolicy instant(unsigned retries) { return RetryPolicy{retries, 0ms, 0ms, 0.5}; }

// What a single transfer's listener hears of the retries, in order.
struct Notes final : ProgressListener {
  void on_retry(unsigned next, unsigned total, double delay, const std::string& reason) override {
    seen.push_back("retry " + std::to_string(next) + "/" + std::to_string(total) + " in " + std::to_string(delay) +
                   ": " + reason);
  }
  std::vector<std::string> seen;
};

TEST(RunAttempts, NumbersTheAttemptsAndReturnsTheOneThatSucceeded) {
  std::vector<unsigned> numbers;
  const unsigned won = run_attempts(instant(4), [&](unsigned n) {
    numbers.push_back(n);
    if (n < 3) throw Error(Errc::network, "cut");
  });
  EXPECT_EQ(won, 3u);
  EXPECT_EQ(numbers, (std::vector<unsigned>{1, 2, 3}));
}

TEST(RunAttempts, ANonRetryableFailureStopsAtOnceAndIsNotAnnounced) {
  for (Errc code : {Errc::usage, Errc::not_found, Errc::permission, Errc::local_io, Errc::exists, Errc::interrupted}) {
    Notes notes;
    unsigned calls = 0, failed = 0;
    try {
      run_attempts(instant(5), [&](unsigned) { ++calls; throw Error(code, "no"); }, &notes,
                   [&](const Error& e) { ++failed; EXPECT_EQ(e.code(), code); });
      FAIL() << "no error";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), code);
    }
    EXPECT_EQ(calls, 1u) << errc_name(code);
    EXPECT_EQ(failed, 1u) << "a batch counts every failed attempt: " << errc_name(code);
    EXPECT_TRUE(notes.seen.empty()) << errc_name(code);
  }
}

TEST(RunAttempts, TheListenerHearsEachRetryThatFollowsAndTheBatchEveryFailure) {
  Notes notes;
  std::vector<std::string> failures;
  const RetryPolicy policy{2, 1ms, 1ms, 0.0};
  try {
    run_attempts(policy, [](unsigned n) { throw Error(Errc::network, "cut " + std::to_string(n)); }, &notes,
                 [&](const Error& e) { failures.push_back(e.what()); });
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "cut 3") << "the last attempt's error";
  }
  EXPECT_EQ(notes.seen, (std::vector<std::string>{"retry 2/3 in 0.001000: cut 1", "retry 3/3 in 0.001000: cut 2"}));
  EXPECT_EQ(failures, (std::vector<std::string>{"cut 1", "cut 2", "cut 3"}));
}

TEST(RunAttempts, RefusesAPolicyOverTheLimitBeforeAnyAttempt) {
  unsigned calls = 0;
  try {
    run_attempts(instant(limits::max_retries + 1), [&](unsigned) { ++calls; });
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::usage);
    EXPECT_NE(std::string(e.what()).find("at most 20"), std::string::npos) << e.what();
  }
  EXPECT_EQ(calls, 0u);
  EXPECT_EQ(run_attempts(instant(limits::max_retries), [](unsigned) {}), 1u) << "the limit itself is allowed";
}

// Ctrl-C during a 10 s pause ends the command within tens of ms, with no further attempt. In a
// child process: the interruption mark cannot be taken back.
TEST(RunAttempts, CtrlCEndsAPauseAtOnce) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        unsigned calls = 0;
        std::thread ctrl_c([] {
          std::this_thread::sleep_for(50ms);
          note_interruption(SIGINT);
        });
        const auto start = std::chrono::steady_clock::now();
        Errc code = Errc::ok;
        try {
          run_attempts(RetryPolicy{3, 10s, 10s, 0.0}, [&](unsigned) { ++calls; throw Error(Errc::network, "cut"); });
        } catch (const Error& e) {
          code = e.code();
        }
        const auto took = std::chrono::steady_clock::now() - start;
        ctrl_c.join();
        std::_Exit(code == Errc::interrupted && calls == 1 && took < 300ms ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
}

// A real put to a port that refuses: every attempt fails on the network, each retry is announced,
// and the session's own put is one attempt (no retry inside it: nothing is retried twice).
TEST(PutRetrying, RetriesARefusedConnectionUnderThePolicyOnly) {
  boost::asio::io_context ioc;
  boost::asio::ip::tcp::acceptor probe(ioc, {boost::asio::ip::make_address("127.0.0.1"), 0});
  const unsigned short port = probe.local_endpoint().port();
  probe.close();  // nothing listens there now: connections are refused
  const auto url = parse_url("pxfer://127.0.0.1:" + std::to_string(port) + "/x.bin");
  ASSERT_TRUE(url.has_value());
  ClientOptions options;
  options.retry = RetryPolicy{2, 1ms, 1ms, 0.0};
  options.connect_timeout = 2s;
  ClientSession session(options);
  Notes notes;
  try {
    get_retrying(session, *url, ::testing::TempDir() + "/retrying_x.bin", options, &notes);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::network) << e.what();
  }
  EXPECT_EQ(notes.seen.size(), 2u);
  Notes once;
  EXPECT_THROW(session.get(*url, ::testing::TempDir() + "/retrying_x.bin", options, &once), Error);
  EXPECT_TRUE(once.seen.empty()) << "ClientSession::get is one attempt";
}

}  // namespace
}  // namespace pxfer
