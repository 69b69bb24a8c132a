#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <thread>

#include "clock.hpp"
#include "commands.hpp"
#include "counters.hpp"
#include "errors.hpp"
#include "file_descriptor.hpp"
#include "forwarder.hpp"
#include "link_network.hpp"
#include "stop_signal.hpp"

namespace wanem {
namespace {

constexpr std::uint64_t kDefaultQueuePackets = 1000;
constexpr std::uint64_t kMinDefaultQueuePackets = 10;

LinkParams to_link_params(const DirectionConfig& direction, Nanos round_trip_delay, int mtu) {
  LinkParams params;
  params.delay = direction.delay;
  params.loss_fraction = direction.loss_fraction;
  params.rate_bps = direction.rate_bps;
  params.queue = direction.queue;
  if (direction.queue_is_default) {
    if (direction.rate_bps > 0 && round_trip_delay > 0) {
      // One bandwidth-delay product: the classic router buffer that lets one TCP flow
      // keep the bottleneck busy.
      const double bdp = static_cast<double>(direction.rate_bps) / 8 * static_cast<double>(round_trip_delay) /
                         kNanosPerSecond;
      params.queue = {QueueLimit::Unit::kBytes,
                      std::max(static_cast<std::uint64_t>(bdp), kMinDefaultQueuePackets * static_cast<std::uint64_t>(mtu))};
    } else {
      params.queue = {QueueLimit::Unit::kPackets, kDefaultQueuePackets};
    }
  }
  return params;
}

std::string parent_directory(const std::string& path) {
  const auto slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

// Fail before building anything rather than after a long run.
void check_writable(const std::string& path, const char* option) {
  if (path.empty()) return;
  if (::access(parent_directory(path).c_str(), W_OK) != 0) {
    throw SetupError(std::string(option) + " '" + path + "': directory " + parent_directory(path) +
                     " is not writable (" + std::strerror(errno) + "); choose another path");
  }
}

void write_file_atomically(const std::string& path, const std::string& content) {
  // Readers polling for the file never see it half written.
  const std::string temporary = path + ".tmp";
  {
    std::ofstream out(temporary, std::ios::trunc);
    out << content;
    if (!out.flush()) throw SetupError("cannot write " + temporary);
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    throw SetupError("cannot create " + path + ": " + std::strerror(errno));
  }
}

std::string describe_direction(const char* label, const LinkParams& params, std::size_t ring_bytes) {
  std::string text = std::string("  ") + label + ": delay " + format_delay(params.delay) + ", loss " +
                     format_loss(params.loss_fraction) + ", rate " + format_rate(params.rate_bps);
  if (params.rate_bps > 0) text += ", queue " + format_queue_limit(params.queue);
  return text + ", ring " + std::to_string(ring_bytes >> 20) + " MiB\n";
}

// Signals are taken synchronously through a signalfd, so a Ctrl-C during set-up is only
// acted on once set-up is complete or undone, never half way.
FileDescriptor block_stop_signals() {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);  // inherited by the forwarding threads
  FileDescriptor fd(::signalfd(-1, &signals, SFD_CLOEXEC));
  if (!fd.valid()) throw SetupError(std::string("signalfd: ") + std::strerror(errno));
  return fd;
}

// Waits for SIGINT/SIGTERM/SIGHUP or for a forwarder that stopped on an error.
void wait_for_stop(int signal_fd, const StopSignal& stop) {
  pollfd fds[2] = {{signal_fd, POLLIN, 0}, {stop.fd(), POLLIN, 0}};
  while (!stop.requested()) {
    if (::poll(fds, 2, -1) < 0 && errno != EINTR) break;
    if (fds[0].revents & POLLIN) break;
  }
}

// Joins the forwarding threads on every way out of run_up, exceptions included.
class ForwardingThreads {
 public:
  ForwardingThreads(StopSignal& stop, Forwarder& a_to_b, Forwarder& b_to_a)
      : stop_(stop), a_to_b_([&a_to_b] { a_to_b.run(); }), b_to_a_([&b_to_a] { b_to_a.run(); }) {}
  ForwardingThreads(const ForwardingThreads&) = delete;
  ForwardingThreads& operator=(const ForwardingThreads&) = delete;
  ~ForwardingThreads() { stop_and_join(); }
  void stop_and_join() {
    stop_.request();
    if (a_to_b_.joinable()) a_to_b_.join();
    if (b_to_a_.joinable()) b_to_a_.join();
  }

 private:
  StopSignal& stop_;
  std::thread a_to_b_;
  std::thread b_to_a_;
};

}  // namespace

int run_up(const UpConfig& config) {
  check_privileges();
  check_writable(config.ready_file, "--ready-file");
  check_writable(config.counters_file, "--counters-file");

  const Nanos round_trip_delay = config.a_to_b.delay + config.b_to_a.delay;
  const LinkParams params_ab = to_link_params(config.a_to_b, round_trip_delay, config.mtu);
  const LinkParams params_ba = to_link_params(config.b_to_a, round_trip_delay, config.mtu);
  const auto mtu = static_cast<std::size_t>(config.mtu);
  const std::size_t ring_ab = config.ring_bytes.value_or(default_ring_bytes(params_ab, mtu));
  const std::size_t ring_ba = config.ring_bytes.value_or(default_ring_bytes(params_ba, mtu));
  const std::uint64_t seed = config.seed.value_or((std::uint64_t{std::random_device{}()} << 32) ^ std::random_device{}());

  const FileDescriptor signal_fd = block_stop_signals();
  LinkNetwork network(config);
  StopSignal stop;
  // Distinct streams per direction, both fixed by the one seed.
  Forwarder a_to_b("a->b", network.tun_a(), network.tun_b(), stop, params_ab, seed, ring_ab, mtu);
  Forwarder b_to_a("b->a", network.tun_b(), network.tun_a(), stop, params_ba, seed ^ 0x9e3779b97f4a7c15ULL, ring_ba,
                   mtu);
  const Nanos started = monotonic_now();
  ForwardingThreads threads(stop, a_to_b, b_to_a);

  std::printf("pxfer-wanem: link '%s' is up: %s (%s) <-> %s (%s), device %s, mtu %d, seed %llu\n",
              config.name.c_str(), config.namespace_a().c_str(), config.address_a().c_str(),
              config.namespace_b().c_str(), config.address_b().c_str(), kTunDeviceName, config.mtu,
              static_cast<unsigned long long>(seed));
  std::printf("%s%s  stop with Ctrl-C or SIGTERM\n", describe_direction("a->b", params_ab, ring_ab).c_str(),
              describe_direction("b->a", params_ba, ring_ba).c_str());
  std::fflush(stdout);
  if (!config.ready_file.empty()) {
    write_file_atomically(config.ready_file, "{\"pid\": " + std::to_string(::getpid()) + ", \"namespace_a\": \"" +
                                                 config.namespace_a() + "\", \"address_a\": \"" + config.address_a() +
                                                 "\", \"namespace_b\": \"" + config.namespace_b() +
                                                 "\", \"address_b\": \"" + config.address_b() + "\"}\n");
  }

  wait_for_stop(signal_fd.get(), stop);
  threads.stop_and_join();
  const double duration = static_cast<double>(monotonic_now() - started) / kNanosPerSecond;

  if (!config.ready_file.empty()) std::remove(config.ready_file.c_str());
  int status = 0;
  for (const auto& problem : network.tear_down()) {
    std::fprintf(stderr, "pxfer-wanem: error: %s; retry with: pxfer-wanem down --name %s\n", problem.c_str(),
                 config.name.c_str());
    status = 1;
  }
  for (const Forwarder* forwarder : {&a_to_b, &b_to_a}) {
    if (!forwarder->error().empty()) {
      std::fprintf(stderr, "pxfer-wanem: error: forwarding stopped: %s\n", forwarder->error().c_str());
      status = 1;
    }
  }

  const LinkReport report{config.name, duration, seed, a_to_b.counters(), b_to_a.counters()};
  std::fputs(format_counters_text(report).c_str(), stdout);
  std::fflush(stdout);
  if (!config.counters_file.empty()) {
    try {
      write_file_atomically(config.counters_file, format_counters_json(report));
    } catch (const SetupError& error) {
      std::fprintf(stderr, "pxfer-wanem: error: --counters-file: %s\n", error.what());
      status = 1;
    }
  }
  return status;
}

}  // namespace wanem
