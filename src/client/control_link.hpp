#pragma once
// The client's side of a control connection, shared by transfers, doctor and sweep: resolve,
// connect, HELLO. And the io_context runner every client entry point uses.
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "net/connection.hpp"
#include "pxfer/url.hpp"
#include "pxfer/wire.hpp"

namespace pxfer {

struct ControlLink {
  std::shared_ptr<net::Connection> connection;
  net::tcp::resolver::results_type data_endpoints;  // where the data streams connect
  std::string authority;                            // "host:port" for messages
  wire::HelloOk hello;
  wire::AuthOk auth;  // who the server says we are
};

// A data stream's connection over a connected socket: clear TCP, or with `encrypt` TLS 1.3 to
// the same certificate the control connection verified. Arguments by reference (g++ 12).
net::awaitable<std::shared_ptr<net::Connection>> open_data_connection(net::tcp::socket& socket, const bool& encrypt,
                                                                      const std::string& authority);
// "control TLS1.3 (...), data clear" for a summary.
std::string describe_protection(const net::Connection& control, bool encrypt);

net::awaitable<ControlLink> open_control(const Url& remote, std::chrono::milliseconds connect_timeout);

// Runs the coroutine `make` returns on a fresh io_context with `threads` threads; rethrows what
// it threw.
void run_io(unsigned threads, const std::function<net::awaitable<void>(boost::asio::io_context&)>& make);

}  // namespace pxfer
