#include "live_sessions.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/steady_timer.hpp>

#include <spdlog/spdlog.h>

#include "authenticator.hpp"
#include "control_session.hpp"
#include "net/frame_io.hpp"
#include "pxfer/core/limits.hpp"

namespace pxfer::server {

namespace asio = boost::asio;

LiveSessions::Registration::~Registration() {
  std::lock_guard lock(owner_.mutex_);
  owner_.sessions_.erase(id_);
}

std::unique_ptr<LiveSessions::Registration> LiveSessions::add(OnReload on_reload) {
  std::lock_guard lock(mutex_);
  const std::uint64_t id = next_id_++;
  sessions_.emplace(id, std::move(on_reload));
  return std::make_unique<Registration>(*this, id);
}

void LiveSessions::reloaded() {
  std::vector<OnReload> calls;
  {
    std::lock_guard lock(mutex_);
    for (const auto& [id, call] : sessions_) calls.push_back(call);
  }
  for (const auto& call : calls) call();  // outside the lock: a callback may end its session
}

std::size_t LiveSessions::size() const {
  std::lock_guard lock(mutex_);
  return sessions_.size();
}

void end_revoked_session(std::shared_ptr<net::Connection> conn, const Error& why) {
  auto ex = conn->socket().get_executor();
  // The close comes at the deadline whether the ERROR went out or not: a client that stopped
  // reading (or a transfer holding the write gate) cannot keep a revoked session open.
  auto timer = std::make_shared<asio::steady_timer>(ex, limits::revoked_session_close);
  timer->async_wait([conn, timer](const boost::system::error_code&) { conn->close(); });
  asio::co_spawn(ex, [conn, why, timer]() -> net::awaitable<void> {
    co_await net::send_error_quietly(*conn, why);
    conn->close();
    timer->cancel();
  }, asio::detached);
}

// Holds a session to the files in force (issue 34): after a reload its rights are decided again,
// and a credential the reload revoked ends the session (the client is told why).
net::awaitable<bool> still_admitted(const SessionContext& cx, net::Connection& conn, SessionRights& rights, std::uint64_t& seen) {
  const std::uint64_t now = cx.auth.generation();
  if (now == seen) co_return true;
  seen = now;
  std::optional<Error> revoked;
  try {
    rights = cx.auth.recheck(rights);
  } catch (const Error& e) {
    revoked = e;
  }
  if (!revoked) co_return true;
  spdlog::info("client={} identity={} {}: control session closed", conn.peer(), rights.identity, revoked->what());
  co_await net::send_error_quietly(conn, *revoked);
  co_return false;
}

// A reload that revokes this session's credential ends it at once, idle or in a transfer.
std::unique_ptr<LiveSessions::Registration> watch_reloads(const SessionContext& cx, const std::shared_ptr<net::Connection>& conn,
                                                          const SessionRights& login) {
  return cx.auth.live().add([&auth = cx.auth, login, weak = std::weak_ptr<net::Connection>(conn)] {
    try {
      (void)auth.recheck(login);
    } catch (const Error& e) {
      auto c = weak.lock();
      if (!c) return;
      spdlog::info("client={} identity={} {}: control session closed", c->peer(), login.identity, e.what());
      end_revoked_session(std::move(c), e);
    }
  });
}

}  // namespace pxfer::server
