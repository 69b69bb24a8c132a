#pragma once
// One kept control connection for requests that each get their answer before the next is sent
// (the namespace requests, streamed I/O), run on a private single-threaded io_context, so the
// gfal2 plugin can call it from whatever thread gfal2 uses. Not thread-safe: one per thread.
#include "pxfer/client/layer.hpp"
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "connect.hpp"
#include "net/frame_io.hpp"
#include "pxfer/client/client.hpp"
#include "pxfer/common/url.hpp"
#include "wire/wire.hpp"

namespace pxfer {

// What a request needs the server to have offered in HELLO_OK, and the words of the refusal
// when it did not: "<authority>: this pxferd predates <feature> (no <FRAME>); upgrade the server".
// (Outside the class: g++ 12 refuses its default member initializers in RequestLink's default arguments.)
struct RequestNeeds {
  std::uint64_t capability = 0;  // 0: nothing
  const char* feature = "";
};

class RequestLink {
 public:
  RequestLink(ClientSecurity security, std::chrono::milliseconds connect_timeout);
  ~RequestLink();  // closes the connection
  RequestLink(const RequestLink&) = delete;
  RequestLink& operator=(const RequestLink&) = delete;

  using Needs = RequestNeeds;
  // The request's answers (several LISTING frames for a LIST), on the connection to url's server
  // (opened now when there is none, or it is to another server). The connection is dropped after
  // a failure of the exchange itself, kept after the server's refusal (an ERROR answer).
  std::vector<wire::Message> request(const Url& url, const wire::Message& message, Needs needs = {});
  // The one answer of type T; the server's ERROR thrown as its Error.
  template <class T>
  T ask(const Url& url, const wire::Message& message, Needs needs = {}) {
    auto replies = request(url, message, needs);
    return net::expect<T>(std::move(replies.front()), url.authority());
  }
  // Drops the connection now (the server then releases what the session held).
  void close();

 private:
  net::awaitable<void> exchange(const Url& url, const wire::Message& request, const Needs& needs,
                                std::vector<wire::Message>& replies);

  boost::asio::io_context ioc_;
  std::shared_ptr<ClientTrust> trust_;
  std::chrono::milliseconds connect_timeout_;
  std::optional<ControlLink> link_;
};

}  // namespace pxfer
