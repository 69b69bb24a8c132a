#include <netinet/in.h>
#include <netinet/tcp.h>

#include "connect.hpp"
#include "net/frame_io.hpp"
#include "pxfer/core/doctor.hpp"
#include "net/host_settings.hpp"
#include "pxfer/core/rate_meter.hpp"

namespace pxfer {

namespace {
net::awaitable<void> measure(const Url& server, const DoctorOptions& options, PathFacts& facts) {
  ControlLink link = co_await open_control(server, options.connect_timeout);
  net::Connection& control = *link.connection;
  double best = 1e9;
  for (unsigned i = 0; i < std::max(1u, options.pings); ++i) {
    wire::Message ping = wire::Ping{i + 1};
    auto sent = Clock::now();
    co_await net::send_message(control, ping);
    wire::Message reply = co_await net::read_message(control);
    auto pong = net::expect<wire::Pong>(std::move(reply), control.peer());
    double rtt = std::chrono::duration<double>(Clock::now() - sent).count();
    if (pong.nonce == i + 1) best = std::min(best, rtt);
  }
  facts.rtt_s = best;
  wire::Message request = wire::InfoRequest{};
  co_await net::send_message(control, request);
  wire::Message reply = co_await net::read_message(control);
  facts.remote = from_entries(net::expect<wire::Info>(std::move(reply), control.peer()).entries);
  int fd = control.socket().native_handle();
  facts.local = read_host_settings(fd);
  // Payload per segment: the path MTU less IPv4 + TCP headers with timestamps.
  if (facts.local.mtu > 100) facts.mss = facts.local.mtu - 52;
}
}  // namespace

PathFacts measure_path(const Url& server, const DoctorOptions& options) {
  PathFacts facts;
  facts.target_bytes_per_s = options.target_bytes_per_s;
  facts.loss = options.loss;
  run_io(1, [&](boost::asio::io_context&) { return measure(server, options, facts); });
  return facts;
}

}  // namespace pxfer
