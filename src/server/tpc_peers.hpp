#pragma once
// Third-party copy on the active server: which peers the operator lets it connect to (pxferd
// --tpc-allow). Entries: "HOST", "HOST:PORT" or "HOST:*" (a name matches the URL's host as
// written; an address matches the address the name resolved to), "[V6]", "[V6]:PORT", "[V6]:*",
// "ADDRESS/PREFIX", "ADDRESS/PREFIX:PORT" or "ADDRESS/PREFIX:*". An entry without a port reaches
// the pxfer port (7521) only: a client cannot aim the server at another service of an allowed host
// and learn from the error whether something listens there (issue 34); ":*" is the operator's
// explicit choice of every port. No sockets: the caller resolves, this only judges.
#include "pxfer/server/layer.hpp"
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace pxfer::server {

class PeerPolicy {
 public:
  // Throws Error(usage) naming the first entry that is none of the forms above.
  explicit PeerPolicy(const std::vector<std::string>& entries);
  bool empty() const { return rules_.empty(); }
  // Whether a connection to `address` (numeric, as resolved), port `port`, for a URL that named
  // `host`, is allowed.
  bool allows(const std::string& host, const std::string& address, std::uint16_t port) const;

 private:
  struct Rule {
    std::string name;            // a host name or a numeric address, "" for a network
    std::uint16_t port = 0;      // 0 = any (":*")
    std::vector<std::uint8_t> network;  // 4 or 16 bytes, for ADDRESS/PREFIX
    unsigned prefix = 0;
  };
  std::vector<Rule> rules_;
};

}  // namespace pxfer::server
