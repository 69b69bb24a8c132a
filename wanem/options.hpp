#pragma once
// The command line of pxfer-wanem: `up` (run an emulated link), `down` (remove the
// leftovers of a crashed run) and `--help`. Parsing fills plain structs; every problem
// is reported as a UsageError naming the option and what would be accepted.

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "clock.hpp"
#include "units.hpp"

namespace wanem {

// The impairments applied to the packets travelling one way.
struct DirectionConfig {
  Nanos delay = 0;
  double loss_fraction = 0;     // probability in [0, 1]
  std::uint64_t rate_bps = 0;   // 0: unlimited
  QueueLimit queue;             // bottleneck queue in front of the rate limiter
  bool queue_is_default = true;
};

struct UpConfig {
  std::string name;
  DirectionConfig a_to_b;
  DirectionConfig b_to_a;
  int mtu = 1500;
  std::array<int, 3> subnet{10, 77, 0};  // A gets .1, B gets .2, prefix /24
  std::optional<std::uint64_t> seed;
  std::string ready_file;
  std::string counters_file;
  std::optional<std::size_t> ring_bytes;  // per direction; computed from the config when unset

  std::string namespace_a() const { return name + "-a"; }
  std::string namespace_b() const { return name + "-b"; }
  std::string address_a() const;  // "10.77.0.1"
  std::string address_b() const;  // "10.77.0.2"
};

struct DownConfig {
  std::string name;
};

struct CommandLine {
  enum class Verb { kUp, kDown, kHelp };
  Verb verb = Verb::kHelp;
  UpConfig up;
  DownConfig down;
};

CommandLine parse_command_line(int argc, char** argv);

std::string usage_text();

}  // namespace wanem
