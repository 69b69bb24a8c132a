// pxfer-fault-proxy: the tests' fault-injecting TCP proxy as a program, for bench/soak.sh.
//   pxfer-fault-proxy UPSTREAM_PORT PORT_FILE
// prints nothing; writes its port to PORT_FILE, then reads commands on stdin, one a line:
//   cut N | stall N          connection N (0 = first accepted) now
//   cut-recent N | stall-recent N   the connection accepted N before the newest (0 = newest)
//   cut-all | stall-all      every connection open now
//   rate BYTES_PER_SECOND    per connection and direction, 0 = unlimited
//   total-rate BYTES_PER_SECOND   all connections together (a shared link), 0 = unlimited
//   upstream PORT            where new connections go
//   stats                    prints "accepted A faults F"
//   bytes                    prints "to_server S to_client C open O" (all connections so far)
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include "fault_proxy.hpp"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: pxfer-fault-proxy UPSTREAM_PORT PORT_FILE\n");
    return 2;
  }
  using pxfer::testing::Fault;
  pxfer::testing::FaultProxy proxy(static_cast<std::uint16_t>(std::stoi(argv[1])));
  {
    std::ofstream(std::string(argv[2]) + ".tmp") << proxy.port() << "\n";
    std::rename((std::string(argv[2]) + ".tmp").c_str(), argv[2]);
  }
  std::string line;
  while (std::getline(std::cin, line)) {
    std::istringstream in(line);
    std::string verb;
    std::uint64_t n = 0;
    in >> verb >> n;
    if (verb == "cut") proxy.inject(n, Fault::cut, 0);
    else if (verb == "stall") proxy.inject(n, Fault::stall, 0);
    else if ((verb == "cut-recent" || verb == "stall-recent") && proxy.accepted() > n)
      proxy.inject(proxy.accepted() - 1 - n, verb == "cut-recent" ? Fault::cut : Fault::stall, 0);
    else if (verb == "cut-all") proxy.inject_all(Fault::cut);
    else if (verb == "stall-all") proxy.inject_all(Fault::stall);
    else if (verb == "rate") proxy.set_rate(n);
    else if (verb == "total-rate") proxy.set_total_rate(n);
    else if (verb == "upstream") proxy.set_upstream(static_cast<std::uint16_t>(n));
    else if (verb == "stats") std::printf("accepted %zu faults %zu\n", proxy.accepted(), proxy.faults_fired());
    else if (verb == "bytes") {
      auto c = proxy.carried_since(0);
      std::printf("to_server %llu to_client %llu open %zu\n", static_cast<unsigned long long>(c.to_server),
                  static_cast<unsigned long long>(c.to_client), proxy.open_now());
    }
    std::fflush(stdout);
  }
  return 0;
}
