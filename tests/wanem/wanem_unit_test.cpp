// Unit tests of pxfer-wanem's parsing, packet ring and link model. Plain asserts with a
// summary line, so the test needs nothing beyond the tool's own code.

#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "errors.hpp"
#include "link_model.hpp"
#include "options.hpp"
#include "packet_ring.hpp"
#include "units.hpp"

using namespace wanem;

namespace {

int g_passed = 0;
int g_failed = 0;

void check(bool condition, const char* expression, int line) {
  if (condition) {
    ++g_passed;
  } else {
    ++g_failed;
    std::printf("FAILED line %d: %s\n", line, expression);
  }
}
#define CHECK(expression) check((expression), #expression, __LINE__)

bool throws_usage_error(const std::function<void()>& f) {
  try {
    f();
  } catch (const UsageError&) {
    return true;
  }
  return false;
}

CommandLine parse(std::vector<std::string> args) {
  args.insert(args.begin(), "pxfer-wanem");
  std::vector<char*> argv;
  for (auto& arg : args) argv.push_back(arg.data());
  return parse_command_line(static_cast<int>(argv.size()), argv.data());
}

void test_units() {
  CHECK(parse_delay("20") == 20 * kNanosPerMilli);
  CHECK(parse_delay("20ms") == 20 * kNanosPerMilli);
  CHECK(parse_delay("500us") == 500 * kNanosPerMicro);
  CHECK(parse_delay("1.5s") == 1500 * kNanosPerMilli);
  CHECK(throws_usage_error([] { parse_delay("20min"); }));
  CHECK(throws_usage_error([] { parse_delay("-5"); }));
  CHECK(throws_usage_error([] { parse_delay("11s"); }));

  CHECK(parse_loss_percent("1%") == 0.01);
  CHECK(parse_loss_percent("1") == 0.01);
  CHECK(std::abs(parse_loss_percent("0.01") - 0.0001) < 1e-12);
  CHECK(parse_loss_percent("100%") == 1.0);
  CHECK(throws_usage_error([] { parse_loss_percent("101%"); }));
  CHECK(throws_usage_error([] { parse_loss_percent("0.5x"); }));

  CHECK(parse_link_rate("1gbit") == 1'000'000'000ULL);
  CHECK(parse_link_rate("100Mbit") == 100'000'000ULL);
  CHECK(parse_link_rate("500kbit") == 500'000ULL);
  CHECK(parse_link_rate("1.5gbit") == 1'500'000'000ULL);
  CHECK(parse_link_rate("0") == 0);
  CHECK(parse_link_rate("unlimited") == 0);
  CHECK(throws_usage_error([] { parse_link_rate("100"); }));
  CHECK(throws_usage_error([] { parse_link_rate("100mbps"); }));
  CHECK(throws_usage_error([] { parse_link_rate("fast"); }));

  CHECK(parse_queue_limit("1000").unit == QueueLimit::Unit::kPackets);
  CHECK(parse_queue_limit("1000p").value == 1000);
  CHECK(parse_queue_limit("512kb").unit == QueueLimit::Unit::kBytes);
  CHECK(parse_queue_limit("512kb").value == 512'000);
  CHECK(parse_queue_limit("4mib").value == 4u << 20);
  CHECK(throws_usage_error([] { parse_queue_limit("0"); }));
  CHECK(throws_usage_error([] { parse_queue_limit("12 apples"); }));
}

void test_options() {
  const CommandLine up = parse({"up", "--name", "wan", "--delay", "20", "--delay-ab=5ms", "--rate", "1gbit",
                                "--loss-ba", "0.5%", "--mtu", "9000", "--subnet", "10.88.1", "--seed", "7"});
  CHECK(up.verb == CommandLine::Verb::kUp);
  CHECK(up.up.name == "wan");
  CHECK(up.up.namespace_a() == "wan-a");
  CHECK(up.up.a_to_b.delay == 5 * kNanosPerMilli);  // the override wins though it came first
  CHECK(up.up.b_to_a.delay == 20 * kNanosPerMilli);
  CHECK(up.up.a_to_b.rate_bps == 1'000'000'000ULL && up.up.b_to_a.rate_bps == 1'000'000'000ULL);
  CHECK(up.up.a_to_b.loss_fraction == 0 && up.up.b_to_a.loss_fraction == 0.005);
  CHECK(up.up.mtu == 9000);
  CHECK(up.up.address_b() == "10.88.1.2");
  CHECK(up.up.seed == 7u);

  CHECK(parse({"down", "--name", "wan"}).verb == CommandLine::Verb::kDown);
  CHECK(parse({"--help"}).verb == CommandLine::Verb::kHelp);
  CHECK(throws_usage_error([] { parse({}); }));
  CHECK(throws_usage_error([] { parse({"sideways"}); }));
  CHECK(throws_usage_error([] { parse({"up"}); }));
  CHECK(throws_usage_error([] { parse({"up", "--name", "a/b"}); }));
  CHECK(throws_usage_error([] { parse({"up", "--name", "wan", "--mtu", "100"}); }));
  CHECK(throws_usage_error([] { parse({"up", "--name", "wan", "--subnet", "10.77"}); }));
  CHECK(throws_usage_error([] { parse({"up", "--name", "wan", "--subnet", "10.77.300"}); }));
  CHECK(throws_usage_error([] { parse({"up", "--name", "wan", "--jitter", "5"}); }));
  CHECK(throws_usage_error([] { parse({"up", "--name", "wan", "--delay"}); }));
  CHECK(throws_usage_error([] { parse({"up", "--name", "wan", "--delay-xy", "5"}); }));

  // The error names the option the bad value came from.
  try {
    parse({"up", "--name", "wan", "--rate-ba", "9mbps"});
    CHECK(false);
  } catch (const UsageError& error) {
    CHECK(std::strstr(error.what(), "--rate-ba") != nullptr);
  }
}

void test_packet_ring() {
  constexpr std::size_t kMaxPacket = 100;
  PacketRing ring(1000, kMaxPacket);
  CHECK(ring.empty());

  // Fill, drain partly and refill many times so the writer wraps around repeatedly;
  // every packet must come out intact and in order.
  int next_in = 0;
  int next_out = 0;
  bool order_ok = true;
  for (int round = 0; round < 200; ++round) {
    while (std::byte* slot = ring.reserve()) {
      const std::size_t length = 1 + static_cast<std::size_t>(next_in * 37 % kMaxPacket);
      std::memset(slot, next_in & 0xff, length);
      ring.commit(length, next_in);
      ++next_in;
    }
    const std::size_t drain = 1 + static_cast<std::size_t>(round % 5);
    for (std::size_t i = 0; i < drain && !ring.empty(); ++i) {
      const auto packet = ring.front_packet();
      const std::size_t expected_length = 1 + static_cast<std::size_t>(next_out * 37 % kMaxPacket);
      order_ok = order_ok && ring.front_release_at() == next_out && packet.size() == expected_length &&
                 packet[0] == static_cast<std::byte>(next_out & 0xff) &&
                 packet[packet.size() - 1] == static_cast<std::byte>(next_out & 0xff);
      ring.pop_front();
      ++next_out;
    }
  }
  CHECK(order_ok);
  CHECK(next_in > 400);
  while (!ring.empty()) ring.pop_front();
  CHECK(ring.reserve() != nullptr);
}

void test_link_model_delay_only() {
  LinkParams params;
  params.delay = 20 * kNanosPerMilli;
  LinkModel model(params, 1);
  Nanos release = 0;
  CHECK(model.admit(1000, 1500, release) == Verdict::kForward);
  CHECK(release == 1000 + 20 * kNanosPerMilli);
}

void test_link_model_rate() {
  // 100 Mbit/s: a 1500-byte packet takes 120 us on the wire.
  LinkParams params;
  params.rate_bps = 100'000'000;
  params.delay = kNanosPerMilli;
  params.queue = {QueueLimit::Unit::kPackets, 1000};
  LinkModel model(params, 1);
  Nanos release = 0;
  for (int i = 0; i < 100; ++i) {
    CHECK(model.admit(0, 1500, release) == Verdict::kForward);
  }
  CHECK(release == 100 * 120'000 + kNanosPerMilli);  // back-to-back burst leaves at line rate

  // A sub-nanosecond serialisation remainder must not drift: 1 Gbit/s, 3 bytes = 24 ns,
  // 1 byte = 8 ns; 10 Gbit/s of 1 byte = 0.8 ns each, 1e6 of them = exactly 0.8 ms.
  LinkParams fast;
  fast.rate_bps = 10'000'000'000ULL;
  fast.queue = {QueueLimit::Unit::kPackets, 1'000'000};
  LinkModel fast_model(fast, 1);
  for (int i = 0; i < 1'000'000; ++i) fast_model.admit(0, 1, release);
  CHECK(release == 800'000);
}

void test_link_model_queue_limits() {
  LinkParams params;
  params.rate_bps = 8'000'000;  // 1 byte per microsecond
  params.queue = {QueueLimit::Unit::kPackets, 3};
  LinkModel model(params, 1);
  Nanos release = 0;
  CHECK(model.admit(0, 1000, release) == Verdict::kForward);  // departs at 1 ms
  CHECK(model.admit(0, 1000, release) == Verdict::kForward);  // 2 ms
  CHECK(model.admit(0, 1000, release) == Verdict::kForward);  // 3 ms
  CHECK(model.admit(0, 1000, release) == Verdict::kQueueFull);
  CHECK(model.admit(kNanosPerMilli, 1000, release) == Verdict::kForward);  // the first one left
  CHECK(release == 4 * kNanosPerMilli);

  LinkParams bytes = params;
  bytes.queue = {QueueLimit::Unit::kBytes, 2500};
  LinkModel byte_model(bytes, 1);
  CHECK(byte_model.admit(0, 1000, release) == Verdict::kForward);
  CHECK(byte_model.admit(0, 1000, release) == Verdict::kForward);
  CHECK(byte_model.admit(0, 1000, release) == Verdict::kQueueFull);  // 2000 + 1000 > 2500
  CHECK(byte_model.admit(0, 400, release) == Verdict::kForward);
  CHECK(byte_model.admit(1500 * kNanosPerMicro, 1000, release) == Verdict::kForward);  // 900 bytes left + 1000 fit
}

void test_link_model_loss() {
  LinkParams params;
  params.loss_fraction = 0.01;
  auto count_losses = [&params](std::uint64_t seed) {
    LinkModel model(params, seed);
    int lost = 0;
    Nanos release = 0;
    for (int i = 0; i < 100'000; ++i) lost += model.admit(i, 100, release) == Verdict::kLost;
    return lost;
  };
  const int lost = count_losses(42);
  CHECK(lost > 850 && lost < 1150);    // 1000 expected, 4.7 sigma either side
  CHECK(count_losses(42) == lost);     // the seed reproduces the run
  params.loss_fraction = 1.0;
  CHECK(count_losses(1) == 100'000);
  params.loss_fraction = 0.0;
  CHECK(count_losses(1) == 0);
}

}  // namespace

int main() {
  test_units();
  test_options();
  test_packet_ring();
  test_link_model_delay_only();
  test_link_model_rate();
  test_link_model_queue_limits();
  test_link_model_loss();
  std::printf("%d passed, %d failed\n", g_passed, g_failed);
  return g_failed == 0 ? 0 : 1;
}
