#include "pxfer/remote_tree.hpp"

#include "control_link.hpp"
#include "net/frame_io.hpp"
#include "pxfer/error.hpp"

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
    if (entries.size() == 1 && entries.front().relative_path.empty()) return entries.front();
    return std::nullopt;  // a directory
  } catch (const Error& e) {
    if (e.code() == Errc::not_found) return std::nullopt;
    throw;
  }
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
