#pragma once
// The tokens and access files as the running server uses them. A reload (pxferd on SIGHUP,
// Server::reload) loads both files first and swaps them in whole, so a malformed file changes
// nothing. A session already logged in is held to the new files too (issue 34): a reload ends the
// sessions of a credential it revoked (live_sessions.hpp), and a session whose rights it narrowed
// meets them from its next request (Authenticator::recheck).
#include "pxfer/server/layer.hpp"
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "auth.hpp"

namespace pxfer::server {

struct AuthFiles {
  std::optional<TokenStore> tokens;  // none without --tokens
  std::optional<AccessMap> access;   // none without --access: every identity read-write
  // Throws Error naming the file and line when one is missing or malformed.
  static AuthFiles load(const std::string& tokens_file, const std::string& access_file);
};

class AuthTables {
 public:
  std::shared_ptr<const AuthFiles> get() const {
    std::lock_guard lock(mutex_);
    return files_;
  }
  void set(AuthFiles files) {
    auto next = std::make_shared<const AuthFiles>(std::move(files));
    std::lock_guard lock(mutex_);
    files_ = std::move(next);
    ++generation_;
  }
  // Counts the files swapped in: a session that saw another value re-decides its rights.
  std::uint64_t generation() const { return generation_; }

 private:
  std::atomic<std::uint64_t> generation_{0};
  mutable std::mutex mutex_;
  std::shared_ptr<const AuthFiles> files_ = std::make_shared<const AuthFiles>();
};

// What Server::reload does: checks that the new files keep what the server started with (a reload
// never drops --tokens or --access: that would turn authentication off or make every identity
// read-write), loads them and swaps them into `tables`. Throws Error, leaving `tables` untouched,
// when it refuses.
struct AuthFileNames {
  std::string tokens, access;
};
void reload_auth(AuthTables& tables, const AuthFileNames& started, const AuthFileNames& next);

}  // namespace pxfer::server
