#include "client/remote_tree.hpp"

#include <charconv>

#include "connect.hpp"
#include "net/frame_io.hpp"
#include "pxfer/common/error.hpp"

namespace pxfer {

std::vector<wire::ListEntry> list_remote(const Url& remote, std::chrono::milliseconds connect_timeout) {
  std::vector<wire::ListEntry> entries;
  run_io(1, [&](boost::asio::io_context&) -> net::awaitable<void> {
    ControlLink link = co_await open_control(remote, connect_timeout);
    wire::Message request = wire::List{remote.path};
    co_await net::send_message(*link.connection, request);
    for (;;) {
      wire::Message reply = co_await net::read_message(*link.connection);
      auto part = net::expect<wire::Listing>(std::move(reply), link.connection->peer());
      if (entries.size() + part.entries.size() > wire::max_list_entries)
        throw Error(Errc::protocol, link.authority + ": sent more than " + std::to_string(wire::max_list_entries) +
                                        " entries for one LIST");
      for (auto& e : part.entries) entries.push_back(std::move(e));
      if (!part.more) break;
    }
  });
  return entries;
}

std::optional<wire::ListEntry> stat_remote(const Url& remote, std::chrono::milliseconds connect_timeout) {
  try {
    auto entries = list_remote(remote, connect_timeout);
    if (entries.size() == 1 && entries.front().relative_path.empty()) {
      entries.front().mode &= 0777;  // --preserve never takes set-id or sticky bits from a server
      return entries.front();
    }
    return std::nullopt;  // a directory
  } catch (const Error& e) {
    if (e.code() == Errc::not_found) return std::nullopt;
    throw;
  }
}

ServerLimits server_limits(const Url& server, std::chrono::milliseconds connect_timeout) {
  std::vector<std::pair<std::string, std::string>> entries;
  run_io(1, [&](boost::asio::io_context&) -> net::awaitable<void> {
    ControlLink link = co_await open_control(server, connect_timeout);
    wire::Message request = wire::InfoRequest{};
    co_await net::send_message(*link.connection, request);
    wire::Message reply = co_await net::read_message(*link.connection);
    entries = net::expect<wire::Info>(std::move(reply), link.connection->peer()).entries;
  });
  // "0" (no limit), a missing key (an older server) or a malformed value all mean: no limit known.
  auto limit = [&](const std::string& key) -> std::optional<unsigned> {
    for (const auto& [k, v] : entries) {
      if (k != key) continue;
      unsigned n = 0;
      auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
      if (ec == std::errc() && end == v.data() + v.size() && n > 0) return n;
    }
    return std::nullopt;
  };
  return ServerLimits{limit("max_active"), limit("max_streams_per_client")};
}

void make_remote_directories(const Url& server, const std::vector<std::string>& paths,
                             std::chrono::milliseconds connect_timeout) {
  if (paths.empty()) return;
  run_io(1, [&](boost::asio::io_context&) -> net::awaitable<void> {
    ControlLink link = co_await open_control(server, connect_timeout);
    for (const auto& path : paths) {
      wire::Message request = wire::Mkdir{path};
      co_await net::send_message(*link.connection, request);
      wire::Message reply = co_await net::read_message(*link.connection);
      net::expect<wire::Done>(std::move(reply), link.connection->peer());
    }
  });
}

}  // namespace pxfer
