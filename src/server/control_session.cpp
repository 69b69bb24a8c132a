#include "control_session.hpp"

#include <spdlog/spdlog.h>

#include <functional>
#include <memory>

#include "data_connection.hpp"
#include "live_sessions.hpp"
#include "stream_files.hpp"
#include "io/namespace_ops.hpp"
#include "io/tree.hpp"
#include "net/frame_io.hpp"
#include "net/host_settings.hpp"
#include "pxfer/core/limits.hpp"
#include "pxfer/version.hpp"

namespace pxfer::server {
namespace {

using net::awaitable;
using net::Connection;

// Runs a request that needs no transfer; its error, if any, is what the client is told (kept out
// of the catch block: no co_await may happen inside a handler).
template <class F>
std::optional<Error> attempt(F&& request) {
  try {
    request();
  } catch (const Error& e) {
    return e;
  }
  return std::nullopt;
}

// A rename or a recursive remove acts on everything below `path`: refused when the identity's
// access file makes a name below it read-only (per path the longest grant decides, so rights on
// `path` alone would let it take away what it may only read).
std::optional<Error> read_only_below(const SessionRights& rights, const std::string& path) {
  auto normal = normalize_request_path(path);
  if (!normal) return std::nullopt;  // authorize() has decided on it already
  for (const auto& g : rights.grants) {
    const bool below = normal->empty() ? !g.path.empty() : g.path.rfind(*normal + "/", 0) == 0;
    if (below && !g.write)
      return Error(Errc::permission, "identity " + rights.identity + " may not remove or rename " + path + ": " + g.path +
                                         " below it is read-only for it");
  }
  return std::nullopt;
}

bool is_small_file(const wire::Message& m) {
  return std::holds_alternative<wire::PutSmall>(m) || std::holds_alternative<wire::GetSmall>(m);
}
// A request's share of limits::small_batch_bytes as requests are read: a put's bytes; a get's
// bytes are counted as its trip reads them (TransferService::small_files).
std::size_t small_bytes(const wire::Message& m) {
  const auto* put = std::get_if<wire::PutSmall>(&m);
  return put ? put->data.size() : 0;
}

wire::Message done_or_error(const std::optional<Error>& refused) {
  if (refused) return wire::ErrorMsg{static_cast<std::uint16_t>(refused->code()), refused->what()};
  return wire::Done{};
}

// One handler per request of an authenticated control session. Each checks the identity's
// rights to the path it names, then answers; a refusal leaves the session ready for the next.
class Handlers {
 public:
  Handlers(const SessionContext& cx, std::shared_ptr<Connection> conn, const SessionRights& rights, std::uint64_t caps,
           const std::string& agent)
      : cx_(cx), conn_(std::move(conn)), rights_(rights), caps_(caps), who_{rights.identity, agent},
        streams_(cx.options, cx.root, cx.transfers.unfinished(), cx.transfers.pacing_stop(), rights, conn_->peer()) {}

  awaitable<void> operator()(wire::Open& m) {
    const bool denied = co_await refused(m.path, m.direction == wire::Direction::put);
    if (denied) co_return;
    co_await cx_.transfers.serve(conn_, m, caps_, who_);
  }
  // PUT_SMALL / GET_SMALL come through small_files(), a batch at a time (control_session below).
  awaitable<void> operator()(wire::PutSmall& m) { co_await one_small(m); }
  awaitable<void> operator()(wire::GetSmall& m) { co_await one_small(m); }
  // The small-file channel (transfer/small_channel.hpp): one per session, joined by the data
  // connection that proves its token under this connection's exporter.
  awaitable<void> operator()(wire::SmallChannel&) {
    if (!(caps_ & wire::cap_small_channel) || channel_)
      throw Error(Errc::protocol, channel_ ? "a second SMALL_CHANNEL on one control connection" : "unexpected SMALL_CHANNEL");
    channel_ = cx_.transfers.small_channels().open(*conn_);
    wire::Message ok = wire::SmallChannelOk{channel_->token};
    co_await reply(ok);
  }
  // A PUT_SMALL's bytes: on the channel once one joined (its next SMALL_DATA), else in the frame.
  awaitable<void> take_small_data(wire::Message& m) {
    auto* put = std::get_if<wire::PutSmall>(&m);
    auto channel = put && channel_ ? channel_->channel() : nullptr;
    if (!channel) co_return;
    if (!put->data.empty()) throw Error(Errc::protocol, "PUT_SMALL with its bytes inline on a session with a channel");
    put->data = co_await channel->receive(put->id, cx_.options.idle_timeout);  // a client that never sends ends here
  }
  awaitable<void> operator()(wire::Ping& m) {
    wire::Message pong = wire::Pong{m.nonce};
    co_await reply(pong);
  }
  awaitable<void> operator()(wire::Remove& m) {
    const bool denied = co_await refused(m.path, true);
    if (denied) co_return;
    auto failed = attempt([&] { remove_file(cx_.root, m.path); });
    if (!failed) spdlog::info("client={} identity={} path={} removed", conn_->peer(), rights_.identity, m.path);
    wire::Message answer = done_or_error(failed);
    co_await reply(answer);
  }
  awaitable<void> operator()(wire::Mkdir& m) {
    const bool denied = co_await refused(m.path, true);
    if (denied) co_return;
    auto make = [&] { if (make_directories(cx_.root, m.path)) cx_.transfers.directory_made(m.path); };
    wire::Message answer = done_or_error(attempt(make));
    co_await reply(answer);
  }
  // The tree is walked on the blocking pool a frame at a time, each frame sent before the next is
  // read: memory stays at one frame however big the tree. An error after some frames went out is
  // an ERROR in place of the next LISTING (the client drops what it got).
  awaitable<void> operator()(wire::List& m) {
    const bool denied = co_await refused(m.path, false);
    if (denied) co_return;
    auto permit = co_await cx_.slow_requests.enter(rights_.identity);
    std::unique_ptr<TreeWalk> walk;
    for (bool more = true; more;) {
      wire::Listing frame;
      std::function<void()> step = [&] {
        if (!walk) walk = std::make_unique<TreeWalk>(cx_.root, m.path);
        frame = walk->next();
      };
      auto failed = co_await off_thread(step);
      if (failed) {
        wire::Message answer = done_or_error(failed);
        co_await reply(answer);
        co_return;
      }
      more = frame.more != 0;
      wire::Message part = std::move(frame);
      co_await reply(part);
    }
  }
  awaitable<void> operator()(wire::Sum& m) {
    const bool denied = co_await refused(m.path, false);
    if (denied) co_return;
    auto permit = co_await cx_.slow_requests.enter(rights_.identity);
    FileSum result;
    std::function<void()> sum = [&] {
      result = sum_file(cx_.root, m.path, static_cast<ChecksumAlgo>(m.checksum), m.size, &cx_.stopping,
                        cx_.options.stored_checksums);
    };
    auto failed = co_await off_thread(sum);
    wire::Message answer = failed ? done_or_error(failed) : wire::Message(wire::SumOk{result.size, result.value});
    co_await reply(answer);
  }
  awaitable<void> operator()(wire::SetAttributes& m) {
    const bool denied = co_await refused(m.path, true);
    if (denied) co_return;
    wire::Message answer = done_or_error(attempt([&] { set_file_attributes(cx_.root, m.path, m.mode, m.mtime_ns); }));
    co_await reply(answer);
  }
  // STAT, RENAME, REMOVE_TREE (pxfer stat / mv / rm -r, the gfal2 plugin): io/namespace_ops.hpp.
  awaitable<void> operator()(wire::Stat& m) {
    const bool denied = co_await refused(m.path, false);
    if (denied) co_return;
    wire::ListEntry entry;
    auto failed = attempt([&] { entry = stat_entry(cx_.root, m.path); });
    wire::Message answer = failed ? done_or_error(failed) : wire::Message(wire::StatOk{entry});
    co_await reply(answer);
  }
  awaitable<void> operator()(wire::Rename& m) {
    const bool from_denied = co_await refused(m.from, true);
    if (from_denied) co_return;
    const bool to_denied = co_await refused(m.to, true);
    if (to_denied) co_return;
    auto failed = read_only_below(rights_, m.from);
    if (!failed) failed = read_only_below(rights_, m.to);  // an overwritten directory goes too
    if (!failed) failed = attempt([&] { rename_entry(cx_.root, m.from, m.to, m.overwrite != 0); });
    if (!failed) spdlog::info("client={} identity={} path={} renamed to {}", conn_->peer(), rights_.identity, m.from, m.to);
    wire::Message answer = done_or_error(failed);
    co_await reply(answer);
  }
  awaitable<void> operator()(wire::RemoveTree& m) {
    const bool denied = co_await refused(m.path, true);
    if (denied) co_return;
    auto failed = m.recursive ? read_only_below(rights_, m.path) : std::nullopt;
    if (!failed) failed = attempt([&] { remove_entry(cx_.root, m.path, m.recursive != 0); });
    if (!failed) spdlog::info("client={} identity={} path={} removed{}", conn_->peer(), rights_.identity, m.path,
                              m.recursive ? " (recursive)" : "");
    wire::Message answer = done_or_error(failed);
    co_await reply(answer);
  }
  awaitable<void> operator()(wire::ListChildren& m) {
    const bool denied = co_await refused(m.path, false);
    if (denied) co_return;
    std::vector<wire::ListEntry> entries;
    auto failed = attempt([&] { entries = list_children(cx_.root, m.path); });
    if (failed) {
      wire::Message answer = done_or_error(failed);
      co_await reply(answer);
      co_return;
    }
    for (auto& frame : wire::split_listing(std::move(entries))) {
      wire::Message part = std::move(frame);
      co_await reply(part);
    }
  }
  // Third-party copy (tpc_service.hpp): a grant needs the access the peer will use (write for a
  // put into this server, read for a get); a copy needs the access this server will use locally.
  awaitable<void> operator()(wire::TpcGrantRequest& m) {
    const bool denied = co_await refused(m.path, m.direction == wire::Direction::put);
    if (denied) co_return;
    co_await cx_.tpc.grant(*conn_, rights_, m);
  }
  awaitable<void> operator()(wire::TpcStart& m) {
    const bool denied = co_await refused(m.local_path, m.mode == wire::CopyMode::pull);
    if (denied) co_return;
    co_await cx_.tpc.start(*conn_, rights_, who_.agent, m, caps_);
  }
  // Streamed I/O (stream_files.hpp): an open is authorized as OPEN is; each request then names one of
  // this session's handles and is answered (or refused) on the blocking pool.
  awaitable<void> operator()(wire::StreamOpen& m) {
    const bool denied = co_await refused(m.path, m.mode == wire::StreamMode::write);
    if (denied) co_return;
    co_await stream_request(m);
  }
  awaitable<void> operator()(wire::StreamRead& m) { co_await stream_request(m); }
  awaitable<void> operator()(wire::StreamWrite& m) { co_await stream_request(m); }
  awaitable<void> operator()(wire::StreamClose& m) { co_await stream_request(m); }
  template <class Request>
  awaitable<void> stream_request(Request& m) {
    if (!(caps_ & wire::cap_stream_io)) throw Error(Errc::protocol, "unexpected STREAM_* frame without cap_stream_io");
    wire::Message answer;
    std::function<void()> serve = [&] { answer = streams_.serve(m); };
    auto failed = co_await off_thread(serve);
    if (failed) answer = done_or_error(failed);
    co_await reply(answer);
  }
  // INFO (pxfer doctor, --auto): the host's TCP settings and the server's load.
  awaitable<void> operator()(wire::InfoRequest&) {
    auto entries = to_entries(read_host_settings(conn_->socket().native_handle()));
    auto load = cx_.admission.load();
    entries.emplace_back("active", std::to_string(load.active));
    entries.emplace_back("queued", std::to_string(load.queued));
    entries.emplace_back("max_active", std::to_string(load.max_active));
    entries.emplace_back("max_streams_per_client", std::to_string(cx_.options.max_streams_per_client));
    entries.emplace_back("clients", std::to_string(load.clients));
    entries.emplace_back("client_streams", std::to_string(cx_.admission.streams_of(client_address(*conn_))));
    wire::Message info = wire::Info{std::move(entries)};
    co_await reply(info);
  }
  template <class Other>
  awaitable<void> operator()(Other& m) {
    throw Error(Errc::protocol, std::string("unexpected ") + wire::type_name(wire::type_of(wire::Message(m))));
    co_return;
  }

  template <class Request>
  awaitable<void> one_small(Request& m) {
    std::vector<wire::Message> batch;
    batch.emplace_back(std::move(m));
    co_await small_files(batch);
  }

 private:
  // Messages are named before a co_await, never temporaries in it: g++ 12 mishandles those.
  awaitable<void> reply(wire::Message& message) { co_await net::send_message(*conn_, message); }

  // Runs `work` on the blocking pool; its pxfer::Error, if any, is what the client is told.
  awaitable<std::optional<Error>> off_thread(const std::function<void()>& work) {
    std::optional<Error> failed;
    std::function<void()> guarded = [&] { failed = attempt(work); };
    co_await cx_.blocking.run(guarded, rights_.identity);
    co_return failed;
  }

  // PUT_SMALL / GET_SMALL requests read at once (small_files.cpp): each path authorized here, the
  // rest served together, and every answer, a refusal too, carries its request's id and leaves in
  // one write, in request order; the session then reads the next request.
 public:
  awaitable<void> small_files(std::vector<wire::Message>& batch) {
    std::vector<std::optional<wire::Message>> refusals = authorize_small(batch);
    // A trip that read limits::small_batch_bytes of gets answers only the first requests: the
    // rest go again (TransferService::small_files).
    while (!batch.empty()) {
      const std::size_t answered = co_await small_trip(batch, refusals);
      batch.erase(batch.begin(), batch.begin() + static_cast<std::ptrdiff_t>(answered));
      refusals.erase(refusals.begin(), refusals.begin() + static_cast<std::ptrdiff_t>(answered));
    }
  }

 private:
  // Each request's refusal (its answer), or nothing where the identity may do it.
  std::vector<std::optional<wire::Message>> authorize_small(const std::vector<wire::Message>& batch) {
    std::vector<std::optional<wire::Message>> refusals(batch.size());
    for (std::size_t i = 0; i < batch.size(); ++i) {
      auto refuse = [&](const auto& request, auto answer, bool write) {
        auto denied = Authenticator::authorize(rights_, request.path, write);
        if (!denied) return;
        spdlog::info("client={} identity={} refused: {}", conn_->peer(), rights_.identity, denied->what());
        answer.id = request.id;
        answer.code = static_cast<std::uint16_t>(denied->code());
        answer.message = denied->what();
        refusals[i] = std::move(answer);
      };
      if (auto* put = std::get_if<wire::PutSmall>(&batch[i])) refuse(*put, wire::PutSmallOk{}, true);
      else refuse(std::get<wire::GetSmall>(batch[i]), wire::GetSmallOk{}, false);
    }
    return refusals;
  }

  // One trip of small_files: the answers of the first requests (all, or those the trip's bytes
  // allowed) sent; returns how many.
  awaitable<std::size_t> small_trip(std::vector<wire::Message>& batch, std::vector<std::optional<wire::Message>>& refusals) {
    auto answers = co_await cx_.transfers.small_files(conn_, batch, refusals, who_);
    auto channel = channel_ ? channel_->channel() : nullptr;
    if (!channel) {
      co_await net::send_messages(*conn_, answers);
      co_return answers.size();
    }
    // The answers first (the client reads each, then its bytes from the channel), then the bytes.
    std::vector<wire::Message> data;
    for (auto& answer : answers)
      if (auto* get = std::get_if<wire::GetSmallOk>(&answer); get && get->code == 0 && !get->too_large)
        data.emplace_back(channel->seal(get->id, std::exchange(get->data, {})));
    co_await net::send_messages(*conn_, answers);
    if (!data.empty()) co_await channel->send(data);
    co_return answers.size();
  }

 private:
  // True (and the client told why) when the identity may not touch `path` this way. Callers
  // name the result before testing it: g++ 12 miscompiles `if (co_await ...)` (SIGILL here).
  awaitable<bool> refused(const std::string& path, bool write) {
    auto denied = Authenticator::authorize(rights_, path, write);
    if (!denied) co_return false;
    spdlog::info("client={} identity={} refused: {}", conn_->peer(), rights_.identity, denied->what());
    wire::Message answer = done_or_error(denied);
    co_await reply(answer);
    co_return true;
  }

  const SessionContext& cx_;
  std::shared_ptr<Connection> conn_;
  const SessionRights& rights_;
  const std::uint64_t caps_;
  const TransferService::Who who_;
  std::shared_ptr<SmallChannels::Slot> channel_;  // SMALL_CHANNEL's; the channel closes with the session
  StreamFiles streams_;  // STREAM_OPEN's handles; an unclosed write's temporary goes with the session
};

// AUTH after HELLO_OK: the rights of the session, or nothing (the client was told why).
awaitable<std::optional<SessionRights>> log_in(const SessionContext& cx, Connection& conn) {
  auto first = co_await net::read_login_message_within(conn, cx.options.hello_timeout);
  if (!first) co_return std::nullopt;
  std::optional<SessionRights> rights;
  std::optional<Error> refused;
  try {
    auto auth = net::expect<wire::Auth>(std::move(*first), conn.peer());
    // A third-party copy grant (tpc_grants.hpp) stands in for a token, for one transfer.
    rights = GrantBook::is_grant(auth.token) ? cx.tpc.grants().redeem(auth.token, Clock::now())
                                             : cx.auth.authenticate(conn, auth);
  } catch (const Error& e) {
    refused = e;
  }
  if (refused) {
    ++cx.metrics.auth_failures;
    co_await net::send_error_quietly(conn, *refused);
    co_return std::nullopt;
  }
  conn.mark_logged_in();
  wire::Message auth_ok = wire::AuthOk{rights->identity, rights->wire_rights()};
  co_await net::send_message(conn, auth_ok);
  co_return rights;
}

awaitable<void> control_session(const SessionContext& cx, std::shared_ptr<Connection> conn, const wire::Hello& hello) {
  if (hello.min_version > wire::protocol_version || hello.version < wire::protocol_version) {
    Error unsupported(Errc::protocol, "protocol version " + std::to_string(hello.version) + " not supported (server speaks " +
                                          std::to_string(wire::protocol_version) +
                                          "; use pxfer and pxferd of the same release)");
    co_await net::send_error_quietly(*conn, unsupported);
    co_return;
  }
  enable_keepalive(conn->socket().native_handle(), 60);
  const std::uint64_t caps = hello.capabilities & wire::our_capabilities;
  wire::Message hello_ok = wire::HelloOk{wire::protocol_version, caps, server_agent, wire::max_block_size};
  co_await net::send_message(*conn, hello_ok);
  spdlog::debug("client={} agent={}", conn->peer(), hello.agent);
  std::uint64_t generation = cx.auth.generation();  // before the login reads the files
  std::optional<SessionRights> rights = co_await log_in(cx, *conn);
  if (!rights) co_return;
  const auto watched = watch_reloads(cx, conn, *rights);
  Handlers handlers(cx, conn, *rights, caps, hello.agent);
  unsigned grant_opens = 0;
  for (;;) {
    const bool admitted = co_await still_admitted(cx, *conn, *rights, generation);
    if (!admitted) co_return;
    auto next = co_await net::read_message_within(*conn, cx.options.idle_timeout);
    if (next) {  // a reload while it waited: this request meets the new rights
      const bool still = co_await still_admitted(cx, *conn, *rights, generation);
      if (!still) co_return;
    }
    if (!next) {
      spdlog::info("client={} identity={} idle for {}s, control session closed", conn->peer(), rights->identity,
                   std::chrono::duration_cast<std::chrono::seconds>(cx.options.idle_timeout).count());
      co_return;
    }
    wire::Message message = std::move(*next);
    if (is_small_file(message) && !rights->tpc) {
      // What else the client has in flight and the server has already received is served with
      // it: one slot, one trip to the blocking pool and one write of the answers for all.
      std::vector<wire::Message> batch;
      std::optional<wire::Message> after;  // a request of another kind that ended the batch
      bool silent = false;
      co_await handlers.take_small_data(message);
      std::size_t bytes = small_bytes(message);
      batch.push_back(std::move(message));
      while (batch.size() < limits::small_files_in_flight && bytes < limits::small_batch_bytes &&
             conn->has_buffered_input()) {
        auto more = co_await net::read_message_within(*conn, cx.options.idle_timeout);
        if (!more) {
          silent = true;
          break;
        }
        if (!is_small_file(*more)) {
          after = std::move(*more);
          break;
        }
        co_await handlers.take_small_data(*more);
        bytes += small_bytes(*more);
        batch.push_back(std::move(*more));
      }
      co_await handlers.small_files(batch);
      if (silent) co_return;
      if (!after) continue;
      message = std::move(*after);
    }
    // A session that logged in with a grant may make only the one OPEN the grant names.
    const auto beyond_grant = rights->tpc ? grant_refusal(*rights->tpc, message, grant_opens) : std::nullopt;
    if (beyond_grant) {
      spdlog::warn("client={} identity={} refused: {}", conn->peer(), rights->identity, beyond_grant->what());
      co_await net::send_error_quietly(*conn, *beyond_grant);
      co_return;
    }
    co_await std::visit(handlers, message);
  }
}

}  // namespace

// The first frame says what a connection is: HELLO opens a control session, ATTACH joins a
// data stream to its transfer. Anything else, or nothing in time, is dropped.
awaitable<void> serve_connection(const SessionContext& cx, std::shared_ptr<Connection> conn) {
  bool handed_over = false;  // a small-file channel: its control session closes it
  try {
    auto first = co_await net::read_login_message_within(*conn, cx.options.hello_timeout);
    if (!first) {
      spdlog::debug("{}: no HELLO or ATTACH within the deadline, dropped", conn->peer());
      co_return;
    }
    wire::Message message = std::move(*first);
    if (auto* hello = std::get_if<wire::Hello>(&message)) {
      if (conn->tls()) {
        co_await control_session(cx, conn, *hello);
      } else {
        Error clear(Errc::protocol, "control connections must use TLS 1.3; this client is too old for this server");
        co_await net::send_error_quietly(*conn, clear);
      }
    } else if (auto* attach = std::get_if<wire::Attach>(&message)) {
      handed_over = co_await serve_data_connection(cx, conn, *attach);
    } else {
      Error unexpected(Errc::protocol, "expected HELLO or ATTACH");
      co_await net::send_error_quietly(*conn, unexpected);
    }
  } catch (const Error& e) {
    if (!cx.stopping) spdlog::debug("{}: {}", conn->peer(), e.what());
  } catch (const std::exception& e) {
    spdlog::error("{}: {}", conn->peer(), e.what());
  }
  if (!handed_over) conn->close();
}

}  // namespace pxfer::server
