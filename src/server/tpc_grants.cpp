#include "tpc_grants.hpp"

#include <openssl/rand.h>
#include <openssl/sha.h>

#include "pxfer/common/error.hpp"

namespace pxfer::server {
namespace {

std::string hex(const unsigned char* bytes, std::size_t n) {
  static const char digits[] = "0123456789abcdef";
  std::string out;
  for (std::size_t i = 0; i < n; ++i) {
    out += digits[bytes[i] >> 4];
    out += digits[bytes[i] & 0xf];
  }
  return out;
}

std::string digest(const std::string& secret) {
  unsigned char md[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(secret.data()), secret.size(), md);
  return std::string(reinterpret_cast<const char*>(md), sizeof md);
}

std::string refused_text(const std::string& why) {
  return "third-party copy grant refused: " + why;
}

}  // namespace

bool GrantBook::is_grant(const std::string& token) { return token.rfind(prefix, 0) == 0; }

void GrantBook::prune(Clock::time_point now) {
  for (auto it = entries_.begin(); it != entries_.end();) it = it->second.expires <= now ? entries_.erase(it) : std::next(it);
}

std::string GrantBook::issue(const TpcScope& scope, Clock::time_point now) {
  unsigned char raw[32];
  if (RAND_bytes(raw, sizeof raw) != 1) throw Error(Errc::internal, "the random generator failed; no grant issued");
  std::string secret = std::string(prefix) + hex(raw, sizeof raw);
  std::lock_guard lock(mutex_);
  prune(now);
  if (entries_.size() >= max_outstanding)
    throw Error(Errc::network, "this server has " + std::to_string(max_outstanding) +
                                   " third-party copy grants waiting to be used; retry later");
  entries_[digest(secret)] = Entry{scope, now + lifetime_};
  return secret;
}

SessionRights GrantBook::redeem(const std::string& secret, Clock::time_point now) {
  std::optional<Entry> entry;
  {
    std::lock_guard lock(mutex_);
    auto it = entries_.find(digest(secret));
    if (it != entries_.end()) {
      if (it->second.expires > now) entry = it->second;
      entries_.erase(it);  // one AUTH, and an expired one goes as well
    }
  }
  if (!entry) throw Error(Errc::permission, refused_text("unknown, already used or expired (ask for a new one)"));
  const TpcScope& scope = entry->scope;
  SessionRights rights;
  rights.identity = "tpc-peer-for-" + scope.steering_identity;
  rights.grants.push_back(Grant{scope.path, scope.direction == static_cast<std::uint8_t>(wire::Direction::put)});
  rights.tpc = scope;
  return rights;
}

std::optional<Error> grant_refusal(const TpcScope& scope, const wire::Message& message, unsigned& opens) {
  if (std::holds_alternative<wire::Ping>(message)) return std::nullopt;
  const auto* open = std::get_if<wire::Open>(&message);
  if (!open)
    return Error(Errc::permission, std::string("a third-party copy grant admits one OPEN, not ") +
                                       wire::type_name(wire::type_of(message)));
  if (++opens > 1) return Error(Errc::permission, "a third-party copy grant admits one OPEN only");
  const auto path = normalize_request_path(open->path);
  if (!path || *path != scope.path)
    return Error(Errc::permission, "this third-party copy grant is for " + scope.path + ", not " + open->path);
  if (static_cast<std::uint8_t>(open->direction) != scope.direction)
    return Error(Errc::permission, std::string("this third-party copy grant is for a ") +
                                       (scope.direction == static_cast<std::uint8_t>(wire::Direction::put) ? "put" : "get") +
                                       " of " + scope.path);
  if (open->direction == wire::Direction::put) {
    if (open->size != scope.size)
      return Error(Errc::permission, "this third-party copy grant is for " + std::to_string(scope.size) + " bytes, not " +
                                         std::to_string(open->size));
    if ((open->flags & wire::open_overwrite) && !scope.overwrite)
      return Error(Errc::permission, "this third-party copy grant does not allow overwriting " + scope.path);
  }
  return std::nullopt;
}

}  // namespace pxfer::server
