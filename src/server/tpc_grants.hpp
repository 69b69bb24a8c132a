#pragma once
// Third-party copy on the passive server: the one-time grants it hands a steering client, redeemed
// by the peer server as its AUTH token, and the gate that keeps a session logged in with one to
// the single OPEN it names. No sockets: unit-tested with made-up clocks.
#include "pxfer/server/layer.hpp"
#include <chrono>
#include <cstddef>
#include <map>
#include <mutex>
#include <optional>
#include <string>

#include "authenticator.hpp"
#include "pxfer/core/clock.hpp"
#include "wire/wire.hpp"

namespace pxfer::server {

// Grants are random (32 bytes from the OpenSSL CSPRNG), live `lifetime`, and admit one AUTH: a
// secret seen once is gone, whether the copy then succeeds or not (a retry asks for a new grant).
// Only a SHA-256 of each secret is kept, and never logged.
class GrantBook {
 public:
  static constexpr std::size_t max_outstanding = 1024;  // unredeemed grants at once, all clients
  static constexpr const char* prefix = "pxfer-grant:";  // what tells a grant from a token in AUTH

  explicit GrantBook(std::chrono::milliseconds lifetime) : lifetime_(lifetime) {}
  std::chrono::milliseconds lifetime() const { return lifetime_; }
  // A new grant for `scope`; throws Error(network: retry later) when max_outstanding are waiting.
  std::string issue(const TpcScope& scope, Clock::time_point now);
  // The rights of the peer presenting `secret`: only `scope.path`, read or write as the grant's
  // direction says. Throws Error(permission) for an unknown, used or expired grant (one message
  // for all three: the peer learns nothing about which).
  SessionRights redeem(const std::string& secret, Clock::time_point now);
  static bool is_grant(const std::string& token);

 private:
  struct Entry {
    TpcScope scope;
    Clock::time_point expires;
  };
  void prune(Clock::time_point now);  // with mutex_ held

  const std::chrono::milliseconds lifetime_;
  std::mutex mutex_;
  std::map<std::string, Entry> entries_;  // SHA-256(secret) -> what it admits
};

// Whether a session that logged in with a grant may send `message`: PING, and one OPEN that
// matches the scope (path, direction, size of a put, overwrite only when granted). `opens` counts
// the OPENs it made. A refusal is the error to send before closing the session.
std::optional<Error> grant_refusal(const TpcScope& scope, const wire::Message& message, unsigned& opens);

}  // namespace pxfer::server
