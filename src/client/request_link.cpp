#include "request_link.hpp"

#include <boost/asio/co_spawn.hpp>

#include "pxfer/common/error.hpp"

namespace pxfer {

RequestLink::RequestLink(ClientSecurity security, std::chrono::milliseconds connect_timeout)
    : trust_(std::make_shared<ClientTrust>(std::move(security))), connect_timeout_(connect_timeout) {}

RequestLink::~RequestLink() { close(); }

void RequestLink::close() {
  if (link_) link_->connection->close();
  link_.reset();
}

// Arguments by reference: the caller's locals outlive the run (g++ 12 and temporaries).
net::awaitable<void> RequestLink::exchange(const Url& url, const wire::Message& request, const Needs& needs,
                                           std::vector<wire::Message>& replies) {
  if (!link_ || link_->authority != url.authority()) {
    link_.reset();
    ControlLink opened = co_await open_control(url, connect_timeout_, trust_);
    link_ = std::move(opened);
  }
  if (needs.capability && !(link_->hello.capabilities & needs.capability))
    throw Error(Errc::protocol, link_->authority + ": this pxferd predates " + needs.feature + " (no " +
                                    wire::type_name(wire::type_of(request)) + "); upgrade the server");
  co_await net::send_message(*link_->connection, request);
  for (;;) {
    wire::Message reply = co_await net::read_message(*link_->connection);
    auto* part = std::get_if<wire::Listing>(&reply);
    const bool more = part && part->more;
    replies.push_back(std::move(reply));
    if (!more) break;
    if (replies.size() * (wire::max_control_payload / wire::min_entry_bytes) > 4 * wire::max_list_entries)
      throw Error(Errc::protocol, link_->authority + ": sent too many LISTING frames for one LIST");
  }
}

std::vector<wire::Message> RequestLink::request(const Url& url, const wire::Message& message, Needs needs) {
  std::vector<wire::Message> replies;
  std::exception_ptr failure;
  boost::asio::co_spawn(ioc_, exchange(url, message, needs, replies), [&](std::exception_ptr e) { failure = e; });
  ioc_.restart();
  ioc_.run();
  if (failure) {
    close();
    std::rethrow_exception(failure);
  }
  return replies;
}

}  // namespace pxfer
