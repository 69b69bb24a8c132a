#include "options.hpp"

#include <cctype>
#include <charconv>
#include <functional>
#include <map>
#include <string_view>
#include <vector>

#include "errors.hpp"

namespace wanem {
namespace {

constexpr int kMinMtu = 576;    // IPv4 minimum reassembly size; smaller breaks TCP setups
constexpr int kMaxMtu = 65535;  // TUN's maximum

// Link names become namespace names and file names under /var/run/netns.
void validate_name(const std::string& name, const std::string& where) {
  bool ok = !name.empty() && name.size() <= 32 && std::isalnum(static_cast<unsigned char>(name[0]));
  for (char c : name) {
    ok = ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_');
  }
  if (!ok) {
    throw UsageError(where + " '" + name +
                     "' is not a valid link name; use 1-32 letters, digits, '-' or '_', starting with a letter or digit");
  }
}

int parse_int(const std::string& text, int min, int max, const std::string& where) {
  int value = 0;
  auto [rest, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || rest != text.data() + text.size() || value < min || value > max) {
    throw UsageError(where + " '" + text + "' is not a whole number from " + std::to_string(min) + " to " +
                     std::to_string(max));
  }
  return value;
}

std::uint64_t parse_seed(const std::string& text) {
  std::uint64_t value = 0;
  auto [rest, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || rest != text.data() + text.size()) {
    throw UsageError("--seed '" + text + "' is not a non-negative whole number (e.g. --seed 42)");
  }
  return value;
}

std::array<int, 3> parse_subnet(const std::string& text) {
  std::array<int, 3> octets{};
  std::size_t start = 0;
  for (std::size_t i = 0; i < 3; ++i) {
    const std::size_t dot = text.find('.', start);
    const bool last = i == 2;
    if (last != (dot == std::string::npos)) {
      throw UsageError("--subnet '" + text + "' must be the first three octets of a /24, e.g. --subnet 10.77.0");
    }
    octets[i] = parse_int(text.substr(start, last ? std::string::npos : dot - start), 0, 255,
                          "--subnet octet " + std::to_string(i + 1) + " of");
    start = dot + 1;
  }
  return octets;
}

// Applies `parse` to the value and reports errors as coming from `option`.
template <typename Parse>
auto parse_option_value(const std::string& option, const std::string& value, Parse parse) {
  try {
    return parse(value);
  } catch (const UsageError& error) {
    throw UsageError(option + " " + error.what());
  }
}

// Overrides are applied after the symmetric options, whatever their order on the
// command line, so `--delay-ab 5 --delay 20` means 5 ms A->B and 20 ms B->A.
struct PendingValue {
  int pass;  // 0: both directions, 1: one direction
  std::function<void()> apply;
};

using Setter = std::function<void(DirectionConfig&, const std::string& option, const std::string& value)>;

// The options that shape one direction of the link; each also exists as NAME-ab and NAME-ba.
const std::map<std::string, Setter>& direction_setters() {
  static const std::map<std::string, Setter> options = {
    {"delay",
     [](DirectionConfig& d, const std::string& o, const std::string& v) {
       d.delay = parse_option_value(o, v, parse_delay);
     }},
    {"loss",
     [](DirectionConfig& d, const std::string& o, const std::string& v) {
       d.loss_fraction = parse_option_value(o, v, parse_loss_percent);
     }},
    {"rate",
     [](DirectionConfig& d, const std::string& o, const std::string& v) {
       d.rate_bps = parse_option_value(o, v, parse_link_rate);
     }},
    {"queue",
     [](DirectionConfig& d, const std::string& o, const std::string& v) {
       d.queue = parse_option_value(o, v, parse_queue_limit);
       d.queue_is_default = false;
     }},
  };
  return options;
}

// The options that concern the whole link; false when `key` is none of them.
bool set_link_option(UpConfig& config, const std::string& key, const std::string& value) {
  if (key == "name") {
    validate_name(value, "--name");
    config.name = value;
  } else if (key == "mtu") {
    config.mtu = parse_int(value, kMinMtu, kMaxMtu, "--mtu");
  } else if (key == "subnet") {
    config.subnet = parse_subnet(value);
  } else if (key == "seed") {
    config.seed = parse_seed(value);
  } else if (key == "ready-file") {
    config.ready_file = value;
  } else if (key == "counters-file") {
    config.counters_file = value;
  } else if (key == "ring-mb") {
    config.ring_bytes = static_cast<std::size_t>(parse_int(value, 1, 16384, "--ring-mb")) << 20;
  } else {
    return false;
  }
  return true;
}

UpConfig parse_up(const std::vector<std::string>& args) {
  UpConfig config;
  std::vector<PendingValue> pending;
  const auto& direction_options = direction_setters();
  for (std::size_t i = 0; i < args.size(); ++i) {
    std::string option = args[i];
    std::string value;
    bool has_inline_value = false;
    if (const auto eq = option.find('='); option.rfind("--", 0) == 0 && eq != std::string::npos) {
      value = option.substr(eq + 1);
      option = option.substr(0, eq);
      has_inline_value = true;
    }
    if (option.rfind("--", 0) != 0) {
      throw UsageError("unexpected argument '" + option + "' after 'up'; options start with -- (see pxfer-wanem --help)");
    }
    if (!has_inline_value) {
      if (i + 1 >= args.size()) {
        throw UsageError(option + " needs a value (see pxfer-wanem --help)");
      }
      value = args[++i];
    }
    const std::string key = option.substr(2);

    if (set_link_option(config, key, value)) continue;
    if (auto both = direction_options.find(key); both != direction_options.end()) {
      Setter set = both->second;
      pending.push_back({0, [&config, set, option, value] {
                           set(config.a_to_b, option, value);
                           set(config.b_to_a, option, value);
                         }});
    } else if (key.size() > 3 && (key.ends_with("-ab") || key.ends_with("-ba")) &&
               direction_options.count(key.substr(0, key.size() - 3)) != 0) {
      Setter set = direction_options.at(key.substr(0, key.size() - 3));
      DirectionConfig& direction = key.ends_with("-ab") ? config.a_to_b : config.b_to_a;
      pending.push_back({1, [&direction, set, option, value] { set(direction, option, value); }});
    } else {
      throw UsageError("unknown option '" + option + "' for 'up' (see pxfer-wanem --help)");
    }
  }
  for (int pass = 0; pass < 2; ++pass) {
    for (const auto& p : pending) {
      if (p.pass == pass) p.apply();
    }
  }
  if (config.name.empty()) {
    throw UsageError("'up' needs --name NAME (the namespaces are called NAME-a and NAME-b)");
  }
  return config;
}

DownConfig parse_down(const std::vector<std::string>& args) {
  DownConfig config;
  for (std::size_t i = 0; i < args.size(); ++i) {
    std::string option = args[i];
    std::string value;
    if (const auto eq = option.find('='); eq != std::string::npos) {
      value = option.substr(eq + 1);
      option = option.substr(0, eq);
    } else if (i + 1 < args.size()) {
      value = args[++i];
    }
    if (option != "--name") {
      throw UsageError("unknown option '" + option + "' for 'down'; usage: pxfer-wanem down --name NAME");
    }
    validate_name(value, "--name");
    config.name = value;
  }
  if (config.name.empty()) {
    throw UsageError("'down' needs --name NAME (the name given to 'up')");
  }
  return config;
}

}  // namespace

std::string UpConfig::address_a() const {
  return std::to_string(subnet[0]) + "." + std::to_string(subnet[1]) + "." + std::to_string(subnet[2]) + ".1";
}

std::string UpConfig::address_b() const {
  return std::to_string(subnet[0]) + "." + std::to_string(subnet[1]) + "." + std::to_string(subnet[2]) + ".2";
}

CommandLine parse_command_line(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  CommandLine command;
  if (args.empty()) {
    throw UsageError("missing command; use 'pxfer-wanem up --name NAME ...' or see pxfer-wanem --help");
  }
  for (const auto& arg : args) {
    if (arg == "-h" || arg == "--help" || arg == "help") return command;  // Verb::kHelp
  }
  const std::string verb = args.front();
  args.erase(args.begin());
  if (verb == "up") {
    command.verb = CommandLine::Verb::kUp;
    command.up = parse_up(args);
  } else if (verb == "down") {
    command.verb = CommandLine::Verb::kDown;
    command.down = parse_down(args);
  } else {
    throw UsageError("unknown command '" + verb + "'; the commands are 'up' and 'down' (see pxfer-wanem --help)");
  }
  return command;
}

std::string usage_text() {
  return R"(pxfer-wanem: user-space WAN link emulator between two network namespaces

usage:
  pxfer-wanem up --name NAME [options]    run the link in the foreground until SIGINT/SIGTERM
  pxfer-wanem down --name NAME            remove the namespaces left by a crashed 'up'

'up' creates namespaces NAME-a (SUBNET.1/24) and NAME-b (SUBNET.2/24), each with a TUN
device wan0, and forwards packets between them applying the impairments below.

options of 'up' (each impairment also exists as -ab, A to B only, and -ba, B to A only;
those overrides win over the plain option whatever the order):
  --delay T          one-way delay; 20 = 20ms, also 500us, 1.5s        (default 0)
  --loss P           random loss in PERCENT: 1 or 1% = 1 %, 0.01 = 0.01 % (default 0)
  --rate R           bottleneck rate: 500kbit, 100mbit, 1gbit; 0 = unlimited (default 0)
  --queue Q          drop-tail queue in front of the rate limiter: 1000 or 1000p packets,
                     or bytes: 65536b, 512kb, 4mb, 512kib, 4mib
                     (default: one BDP = rate x (delay-ab + delay-ba), at least 10 packets
                     of MTU size; 1000 packets when the rate or the delay is 0)
  --mtu N            MTU of both TUN devices, 576..65535                 (default 1500)
  --subnet A.B.C     the /24 used between the namespaces                 (default 10.77.0)
  --seed N           seed of the loss generator, for reproducible runs  (default random)
  --ready-file PATH  created once the link forwards packets, removed on exit
  --counters-file PATH  counters written as JSON on exit
  --ring-mb N        packet buffer per direction in MiB (default: sized from delay, rate, queue)

examples:
  pxfer-wanem up --name wan --delay 25 --rate 1gbit --loss 0.01%
  ip netns exec wan-b iperf3 -s &  ip netns exec wan-a iperf3 -c 10.77.0.2
)";
}

}  // namespace wanem
