// A data stream's send buffer past autotuning (pxfer/core/send_window.hpp) against made-up streams:
// TCP_INFO's busy and limited times, read every 250 ms as the sender does.
#include <gtest/gtest.h>

#include <functional>
#include <vector>

#include "pxfer/core/send_window.hpp"

namespace pxfer {
namespace {

using namespace std::chrono_literals;
constexpr std::uint32_t MiB = 1u << 20;

// This VM's settings: net.core.wmem_max and tcp_wmem's maximum both 4 MiB, so a pin gets 8 MiB.
SendWindowSettings host(std::uint64_t wmem_max = 4 * MiB) {
  SendWindowSettings s;
  s.pin_ceiling = 2 * wmem_max;
  s.wmem_max = wmem_max;
  s.autotune_max = 4 * MiB;
  return s;
}

struct Stream {
  double sndbuf_share = 0;  // of each quarter second, held by its send buffer by the kernel's count
  double rwnd_share = 0;    // held by the receiver's window
  double busy_share = 1;    // of each quarter second, with data to move
  std::uint32_t sndbuf = 4 * MiB;
  double rtt_ms = 150;
  double bound_share = 0;   // of the looks, buffer-bound: nearly full, all sent, cwnd twice what is out
  double outq_share = 0.9;  // what it holds, of its buffer
  double unsent_share = 0;  // of what it holds, not yet sent
};

// Looks every 250 ms for `seconds`; applies every pin (the kernel grants twice the request) and
// returns what the stream did.
std::vector<WindowMove> run(SendWindow& w, Stream& s, double seconds) {
  std::vector<WindowMove> moves;
  WindowLook look;
  look.at = Clock::time_point{} + 1s;
  double bound = 0;
  for (double t = 0; t <= seconds; t += 0.25) {
    look.at += 250ms;
    look.busy_us += static_cast<std::uint64_t>(250'000 * s.busy_share);
    look.sndbuf_limited_us += static_cast<std::uint64_t>(250'000 * s.busy_share * s.sndbuf_share);
    look.rwnd_limited_us += static_cast<std::uint64_t>(250'000 * s.busy_share * s.rwnd_share);
    look.sndbuf = s.sndbuf;
    look.rtt_ms = s.rtt_ms;
    look.outq_bytes = static_cast<std::uint64_t>(s.outq_share * s.sndbuf);
    look.unsent_bytes = static_cast<std::uint64_t>(s.unsent_share * static_cast<double>(look.outq_bytes));
    bound += s.bound_share;
    const bool this_one = bound >= 1;
    if (this_one) bound -= 1;
    // cwnd-bound: all it may send is out; buffer-bound: the kernel grew cwnd to twice that.
    look.cwnd_bytes = (this_one ? 2 : 1) * (look.outq_bytes - look.unsent_bytes);
    if (auto m = w.observe(look)) {
      if (m->kind == WindowMoveKind::pin) s.sndbuf = 2 * m->request;
      moves.push_back(*m);
    }
  }
  return moves;
}

TEST(SendWindow, AStreamItsSendBufferHoldsGetsTwiceTheBufferUpToWhatAPinCanGet) {
  SendWindow w(host());
  Stream s{.sndbuf_share = 0.9};
  auto moves = run(w, s, 10);
  // 150 ms: a look spans 8 RTT (1.2 s). The first doubles 4 -> 8 MiB, the ceiling; the next says so once.
  ASSERT_EQ(moves.size(), 2u);
  EXPECT_EQ(moves[0].kind, WindowMoveKind::pin);
  EXPECT_EQ(moves[0].request, 4 * MiB);
  EXPECT_EQ(moves[0].text, "send buffer pinned at 8 MiB, was 4 MiB: it held the stream 90 % of the time, RTT 150 ms");
  EXPECT_EQ(moves[1].kind, WindowMoveKind::held_at_ceiling);
  EXPECT_NE(moves[1].text.find("net.core.wmem_max 4 MiB"), std::string::npos) << moves[1].text;
  EXPECT_EQ(s.sndbuf, 8 * MiB);
}

TEST(SendWindow, AHostThatAllowsMoreDoublesWhileTheBufferStillHoldsTheStream) {
  SendWindow w(host(64 * MiB));
  Stream s{.sndbuf_share = 0.8};
  auto moves = run(w, s, 30);
  // 4 -> 8 -> 16 -> 32 -> 64 MiB (limits::max_pinned_send_buffer), then said once.
  std::vector<std::uint32_t> pins;
  for (const auto& m : moves)
    if (m.kind == WindowMoveKind::pin) pins.push_back(2 * m.request);
  EXPECT_EQ(pins, (std::vector<std::uint32_t>{8 * MiB, 16 * MiB, 32 * MiB, 64 * MiB}));
  EXPECT_EQ(moves.back().kind, WindowMoveKind::held_at_ceiling);
}

TEST(SendWindow, OnceTheBufferNoLongerHoldsTheStreamItStays) {
  SendWindow w(host(64 * MiB));
  Stream s{.sndbuf_share = 0.9};
  auto first = run(w, s, 1.5);
  ASSERT_EQ(first.size(), 1u);
  s.sndbuf_share = 0.1;  // 8 MiB covers its share of the path now
  EXPECT_TRUE(run(w, s, 20).empty());
  EXPECT_EQ(s.sndbuf, 8 * MiB);
}

// The kernel's count saw 14 % for a reno put at 100 ms whose every look found 4 MiB out, nothing
// unsent and cwnd at twice what was out (tests/lab/send_window_test.sh's path): the looks decide.
TEST(SendWindow, LooksThatFindTheBufferFullAndCwndWithRoomPinThoughTheKernelsCountMissesIt) {
  SendWindow w(host());
  Stream s{.sndbuf_share = 0.14, .bound_share = 1.0};
  auto moves = run(w, s, 2);
  ASSERT_EQ(moves.size(), 1u);
  EXPECT_EQ(moves[0].kind, WindowMoveKind::pin);
  EXPECT_EQ(moves[0].text, "send buffer pinned at 8 MiB, was 4 MiB: it held the stream 100 % of the time, RTT 150 ms");
}

TEST(SendWindow, DataWaitingUnsentIsTheReceiversWindowNotTheBuffer) {
  SendWindow w(host());
  Stream s{.bound_share = 1.0, .unsent_share = 0.3};  // cwnd has room, yet a third waits: the window
  EXPECT_TRUE(run(w, s, 20).empty());
}

TEST(SendWindow, ABufferFarFromFullIsTheApplicationNotTheBuffer) {
  SendWindow w(host());
  Stream s{.bound_share = 1.0, .outq_share = 0.3};  // a slow disk: a larger buffer would hold no more
  EXPECT_TRUE(run(w, s, 20).empty());
}

TEST(SendWindow, DebiansDefaultWmemMaxPinsNothingAndSaysWhatWould) {
  SendWindow w(host(212992));  // 208 KiB: a pin would get 416 KiB, a tenth of autotuning's 4 MiB
  Stream s{.sndbuf_share = 0.95};
  auto moves = run(w, s, 10);
  ASSERT_EQ(moves.size(), 1u);
  EXPECT_EQ(moves[0].kind, WindowMoveKind::held_at_ceiling);
  EXPECT_EQ(moves[0].text, "the send buffer (4 MiB) held the stream 95 % of the time (RTT 150 ms) and the kernel pins no "
                           "larger one (net.core.wmem_max 208 KiB, tcp_wmem's maximum 4 MiB): raise both on the sending "
                           "host, or use more streams");
}

TEST(SendWindow, StreamsThatLossOrTheLinkHoldsKeepAutotuning) {
  SendWindow w(host());
  Stream s{.sndbuf_share = 0.3};  // cwnd-bound most of the time
  EXPECT_TRUE(run(w, s, 20).empty());
}

TEST(SendWindow, AStreamThatMostlyWaitedForBlocksShowsNothing) {
  SendWindow w(host());
  Stream s{.sndbuf_share = 1.0, .busy_share = 0.3};  // the file's end: the others took the blocks
  EXPECT_TRUE(run(w, s, 20).empty());
}

TEST(SendWindow, TheReceiversWindowIsTheOtherHostsSettingSaidOnce) {
  SendWindow w(host());
  Stream s{.rwnd_share = 0.8};
  auto moves = run(w, s, 20);
  ASSERT_EQ(moves.size(), 1u);
  EXPECT_EQ(moves[0].kind, WindowMoveKind::held_by_receiver);
  EXPECT_EQ(moves[0].text, "the receiver's window held the stream 80 % of the time (RTT 150 ms): raise "
                           "net.ipv4.tcp_rmem's maximum on the receiving host");
}

TEST(SendWindow, AReconnectedStreamCountsFromItsNewSocket) {
  SendWindow w(host());
  WindowLook look;
  look.at = Clock::time_point{} + 1s;
  look.busy_us = 50'000'000;
  look.sndbuf_limited_us = 45'000'000;
  look.sndbuf = 4 * MiB;
  look.rtt_ms = 20;
  EXPECT_FALSE(w.observe(look));
  look.at += 2s;  // a new socket: its counters start again below the old ones
  look.busy_us = 2'000'000;
  look.sndbuf_limited_us = 0;
  EXPECT_FALSE(w.observe(look));
  look.at += 2s;
  look.busy_us += 2'000'000;
  look.sndbuf_limited_us += 1'800'000;
  auto m = w.observe(look);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->kind, WindowMoveKind::pin);
}

}  // namespace
}  // namespace pxfer
