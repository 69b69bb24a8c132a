// Liveness (issue 16.1): a put or a get never hangs on a peer that stopped answering. The server
// is frozen with SIGSTOP (its kernel still accepts connections and buffers bytes, the process never
// answers), or a proxy stops forwarding every connection while it keeps accepting new ones. The
// client reports the stall as one line naming the server within the stall timeout plus a few
// seconds, retries under --retries, and either finishes byte-exact once the server moves again or
// gives up with exit 5 (network). SIGINT ends a client that waits on a frozen server within a second.
#include <gtest/gtest.h>
#include <unistd.h>

#include <csignal>
#include <thread>

#include "fault_proxy.hpp"
#include "support/e2e.hpp"
#include "support/progress.hpp"

namespace pxfer::e2e {
namespace {

using pxfer::testing::FaultProxy;
using namespace std::chrono_literals;
using SteadyClock = std::chrono::steady_clock;

double seconds_since(SteadyClock::time_point t) { return std::chrono::duration<double>(SteadyClock::now() - t).count(); }

struct Frozen {
  const char* direction;
  bool sigstop;  // true: SIGSTOP of pxferd; false: the proxy stops forwarding
};

class StalledPeer : public DirsTest, public ::testing::WithParamInterface<Frozen> {};

// Frozen for 9 s (stall timeout 5 s): the client names the server within 10 s, retries, and the
// file arrives whole once the server answers again.
TEST_P(StalledPeer, ReportedRetriedAndFinished) {
  const bool put = std::string(GetParam().direction) == "put";
  const bool sigstop = GetParam().sigstop;
  std::string source = put ? local + "/f.bin" : root + "/f.bin";
  std::string dest = put ? root + "/f.bin" : local + "/f.bin";
  make_file(source, 64 * MiB, 1601);
  ServerProcess server = serve();
  FaultProxy proxy(server.port());
  proxy.set_rate(8 * MiB);  // per connection: long enough to freeze the server in the middle
  std::vector<std::string> args = put ? std::vector<std::string>{"put", source, via(proxy, "f.bin")}
                                      : std::vector<std::string>{"get", via(proxy, "f.bin"), dest};
  for (const char* a : {"-p", "2", "--perf-interval", "0.1", "--stall-timeout", "5s", "--retries", "3"}) args.emplace_back(a);
  ChildProcess client = start_pxfer(args);
  ASSERT_TRUE(pump_until(client, 30s, [&] { return moved(client, 8 * MiB); })) << client.out() << client.err();
  // The sender's count runs ahead of the receiver by what the buffers hold: wait until the
  // receiver's journal has blocks, so the retry has something to resume.
  const std::string receiving = put ? root : local;
  ASSERT_TRUE(pump_until(client, 30s, [&] { return journaled_blocks(receiving, "f.bin") >= 2; }))
      << client.out() << client.err();
  const auto frozen_at = SteadyClock::now();
  if (sigstop) ::kill(server.pid(), SIGSTOP);
  else proxy.set_frozen(true);
  struct Thaw {
    ServerProcess& server;
    FaultProxy& proxy;
    ~Thaw() {
      ::kill(server.pid(), SIGCONT);
      proxy.set_frozen(false);
    }
  } thaw{server, proxy};
  const std::string expected = "pxferd at 127.0.0.1:" + std::to_string(proxy.port()) + " stopped answering for 5 s";
  ASSERT_TRUE(pump_until(client, 12s, [&] { return contains(client.err(), expected); }))
      << "no stall reported " << seconds_since(frozen_at) << " s after the freeze: " << client.err();
  EXPECT_LT(seconds_since(frozen_at), 10.5) << client.err();
  std::this_thread::sleep_until(frozen_at + 9s);
  if (sigstop) ::kill(server.pid(), SIGCONT);
  else proxy.set_frozen(false);
  bool timed_out = false;
  int status = client.wait(90s, &timed_out);
  ASSERT_FALSE(timed_out) << "the client hung: " << client.err();
  ASSERT_EQ(status, 0) << client.err();
  EXPECT_TRUE(contains(client.err(), "retrying in")) << client.err();
  EXPECT_TRUE(files_equal(source, dest));
  EXPECT_TRUE(contains(client.out(), "resumed: ")) << "the retry did not resume: " << client.out();
  EXPECT_EQ(hidden_temporaries(put ? root : local), std::vector<std::string>{});
}

INSTANTIATE_TEST_SUITE_P(Liveness, StalledPeer,
                         ::testing::Values(Frozen{"put", true}, Frozen{"get", true}, Frozen{"put", false},
                                           Frozen{"get", false}),
                         [](const ::testing::TestParamInfo<Frozen>& p) {
                           return std::string(p.param.direction) + (p.param.sigstop ? "_sigstop" : "_proxy_frozen");
                         });

// A server that never comes back: the client gives up with exit 5 after its retries, well before
// a minute, and is never silent for long.
using Liveness = DirsTest;

TEST_F(Liveness, ServerFrozenForGoodGivesUpWithExit5) {
  make_file(local + "/f.bin", 64 * MiB, 1602);
  ServerProcess server = serve({"--emulate-disk-rate", "16M"});
  ChildProcess client = start_pxfer({"put", local + "/f.bin", server.url("f.bin"), "-p", "4", "--perf-interval", "0.1",
                                     "--stall-timeout", "5s", "--retries", "3"});
  ASSERT_TRUE(pump_until(client, 30s, [&] { return moved(client, 8 * MiB); })) << client.out() << client.err();
  const auto frozen_at = SteadyClock::now();
  ::kill(server.pid(), SIGSTOP);
  bool timed_out = false;
  int status = client.wait(90s, &timed_out);
  const double took = seconds_since(frozen_at);
  ::kill(server.pid(), SIGCONT);
  ASSERT_FALSE(timed_out) << client.err();
  EXPECT_EQ(status, 5) << client.err();
  EXPECT_LT(took, 75.0) << client.err();
  EXPECT_TRUE(contains(client.err(), "pxferd at " + server.authority() + " stopped answering for 5 s")) << client.err();
  EXPECT_EQ(std::count(client.err().begin(), client.err().end(), '\n'), 4) << "one line per attempt: " << client.err();
}

// SIGINT ends a client whose server is frozen within a second, whatever it waits for: here the
// TLS handshake of a new control connection (the server's kernel accepted it).
TEST_F(Liveness, InterruptEndsAWaitOnAFrozenServerAtOnce) {
  make_file(root + "/f.bin", 1 * MiB, 1603);
  ServerProcess server = serve();
  ::kill(server.pid(), SIGSTOP);
  struct Thaw {
    pid_t pid;
    ~Thaw() { ::kill(pid, SIGCONT); }
  } thaw{server.pid()};
  ChildProcess client = start_pxfer({"get", server.url("f.bin"), local + "/f.bin"});
  std::this_thread::sleep_for(1500ms);
  ASSERT_FALSE(client.try_wait()) << client.err();
  const auto sent = SteadyClock::now();
  client.send_signal(SIGINT);
  bool timed_out = false;
  int status = client.wait(10s, &timed_out);
  EXPECT_FALSE(timed_out);
  EXPECT_LT(seconds_since(sent), 1.0) << client.err();
  EXPECT_NE(status, 0);
  EXPECT_EQ(list_dir(local), std::vector<std::string>{});
}

}  // namespace
}  // namespace pxfer::e2e
