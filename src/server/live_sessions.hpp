#pragma once
// The control sessions logged in now, so that a reload reaches them (issue 34): before, a session
// kept the rights it had at login, and an identity whose token or access line was removed went on
// writing until it left. On reload each registered session's callback runs; the session decides
// (Authenticator::recheck) and, when its credential was revoked, it is told so and closed within
// limits::revoked_session_close, its running transfer failing with that reason.
#include "pxfer/server/layer.hpp"
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>

#include "net/connection.hpp"
#include "pxfer/common/error.hpp"

namespace pxfer::server {

struct SessionContext;
struct SessionRights;

class LiveSessions {
 public:
  using OnReload = std::function<void()>;
  // Unregisters its session when destroyed (the session ended).
  class Registration {
   public:
    Registration(LiveSessions& owner, std::uint64_t id) : owner_(owner), id_(id) {}
    ~Registration();
    Registration(const Registration&) = delete;
    Registration& operator=(const Registration&) = delete;

   private:
    LiveSessions& owner_;
    std::uint64_t id_;
  };

  [[nodiscard]] std::unique_ptr<Registration> add(OnReload on_reload);
  // Runs every registered session's callback (from the reloading thread: each posts its work to
  // its own connection's executor).
  void reloaded();
  std::size_t size() const;

 private:
  mutable std::mutex mutex_;
  std::map<std::uint64_t, OnReload> sessions_;
  std::uint64_t next_id_ = 0;
};

// Tells the client of `conn` why (an ERROR frame, given at most limits::revoked_session_close to
// leave) and closes the connection; runs on the connection's executor. Any thread.
void end_revoked_session(std::shared_ptr<net::Connection> conn, const Error& why);

// A control session's side (control_session.cpp). Before each request: when a reload came since
// `seen`, `rights` are decided again (narrowed, widened); false, with the client told why, when the
// reload revoked the credential.
net::awaitable<bool> still_admitted(const SessionContext& cx, net::Connection& conn, SessionRights& rights,
                                    std::uint64_t& seen);
// While it lives, a reload that revokes the credential `login` used ends the session at once
// (end_revoked_session), idle or in a transfer.
std::unique_ptr<LiveSessions::Registration> watch_reloads(const SessionContext& cx,
                                                          const std::shared_ptr<net::Connection>& conn,
                                                          const SessionRights& login);

}  // namespace pxfer::server
