#include "tpc_peers.hpp"

#include <arpa/inet.h>

#include <algorithm>
#include <cctype>

#include "pxfer/common/error.hpp"
#include "pxfer/common/url.hpp"

namespace pxfer::server {
namespace {

// The address's bytes (4 or 16), nullopt when `text` is no numeric address. An IPv4-mapped IPv6
// address counts as its IPv4 address.
std::optional<std::vector<std::uint8_t>> address_bytes(const std::string& text) {
  in_addr v4{};
  in6_addr v6{};
  if (::inet_pton(AF_INET, text.c_str(), &v4) == 1) {
    auto* b = reinterpret_cast<const std::uint8_t*>(&v4);
    return std::vector<std::uint8_t>(b, b + 4);
  }
  if (::inet_pton(AF_INET6, text.c_str(), &v6) == 1) {
    if (IN6_IS_ADDR_V4MAPPED(&v6)) return std::vector<std::uint8_t>(v6.s6_addr + 12, v6.s6_addr + 16);
    return std::vector<std::uint8_t>(v6.s6_addr, v6.s6_addr + 16);
  }
  return std::nullopt;
}

bool in_network(const std::vector<std::uint8_t>& addr, const std::vector<std::uint8_t>& net, unsigned prefix) {
  if (addr.size() != net.size()) return false;
  for (unsigned bit = 0; bit < prefix; ++bit) {
    const unsigned byte = bit / 8, mask = 0x80u >> (bit % 8);
    if ((addr[byte] & mask) != (net[byte] & mask)) return false;
  }
  return true;
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

bool valid_host_name(const std::string& s) {
  return !s.empty() && s.size() <= 253 && std::all_of(s.begin(), s.end(), [](unsigned char c) {
    return std::isalnum(c) || c == '-' || c == '.' || c == '_';
  });
}

Error bad_entry(const std::string& entry, const std::string& why) {
  return Error(Errc::usage, "--tpc-allow " + entry + ": " + why +
                                " (use HOST, HOST:PORT, HOST:*, [IPV6]:PORT or ADDRESS/PREFIX[:PORT] such as 10.1.0.0/16)");
}

// A rule's port: "" is the pxfer port, "*" any port (0), else 1 to 65535.
std::uint16_t port_of(const std::string& entry, const std::string& port) {
  if (port.empty()) return default_port;
  if (port == "*") return 0;
  if (port.size() > 5 || !std::all_of(port.begin(), port.end(), ::isdigit) || std::stoul(port) == 0 ||
      std::stoul(port) > 65535)
    throw bad_entry(entry, "the port is not 1 to 65535 or *");
  return static_cast<std::uint16_t>(std::stoul(port));
}

}  // namespace

PeerPolicy::PeerPolicy(const std::vector<std::string>& entries) {
  for (const auto& entry : entries) {
    Rule rule;
    if (auto slash = entry.find('/'); slash != std::string::npos) {
      auto net = address_bytes(entry.substr(0, slash));
      std::string bits = entry.substr(slash + 1), port;
      if (auto colon = bits.find(':'); colon != std::string::npos) {
        port = bits.substr(colon + 1);
        bits = bits.substr(0, colon);
        if (port.empty()) throw bad_entry(entry, "empty port after :");
      }
      if (!net) throw bad_entry(entry, "not an address before the /");
      if (bits.empty() || bits.size() > 3 || !std::all_of(bits.begin(), bits.end(), ::isdigit) ||
          std::stoul(bits) > net->size() * 8)
        throw bad_entry(entry, "the prefix length is out of range");
      rule.network = *net;
      rule.prefix = static_cast<unsigned>(std::stoul(bits));
      rule.port = port_of(entry, port);
      rules_.push_back(rule);
      continue;
    }
    std::string host = entry, port;
    if (entry.starts_with('[')) {
      auto close = entry.find(']');
      if (close == std::string::npos) throw bad_entry(entry, "no closing ]");
      host = entry.substr(1, close - 1);
      if (close + 1 < entry.size()) {
        if (entry[close + 1] != ':') throw bad_entry(entry, "expected :PORT after ]");
        port = entry.substr(close + 2);
      }
    } else if (std::count(entry.begin(), entry.end(), ':') == 1) {
      host = entry.substr(0, entry.find(':'));
      port = entry.substr(entry.find(':') + 1);
    }
    if (!address_bytes(host) && !valid_host_name(host)) throw bad_entry(entry, "not a host name or an address");
    if (port.empty() && entry.ends_with(':')) throw bad_entry(entry, "empty port after :");
    rule.port = port_of(entry, port);
    rule.name = lower(host);
    rules_.push_back(rule);
  }
}

bool PeerPolicy::allows(const std::string& host, const std::string& address, std::uint16_t port) const {
  const auto addr = address_bytes(address);
  for (const auto& r : rules_) {
    if (r.port != 0 && r.port != port) continue;
    if (!r.network.empty()) {
      if (addr && in_network(*addr, r.network, r.prefix)) return true;
      continue;
    }
    if (auto named = address_bytes(r.name)) {
      if (addr && *named == *addr) return true;
    } else if (r.name == lower(host)) {
      return true;
    }
  }
  return false;
}

}  // namespace pxfer::server
