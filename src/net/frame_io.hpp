#pragma once
// Frames over a Connection: read and write whole messages, turning a peer's ERROR frame and
// unexpected frames into pxfer::Error.
#include "pxfer/io/layer.hpp"
#include <chrono>
#include <optional>

#include "connection.hpp"
#include "pxfer/common/error.hpp"
#include "pxfer/common/log_safe.hpp"
#include "wire/wire.hpp"

namespace pxfer::net {

awaitable<wire::FrameHeader> read_header(Connection& conn);
// The payload of a non-block frame whose header was already read.
awaitable<wire::Message> read_payload(Connection& conn, const wire::FrameHeader& header);
awaitable<wire::Message> read_message(Connection& conn);
awaitable<void> send_message(Connection& conn, const wire::Message& message);
// Several frames in one write (answers that are ready together leave together).
awaitable<void> send_messages(Connection& conn, const std::vector<wire::Message>& messages);
// read_message with a deadline: nullopt when nothing complete arrived in time.
awaitable<std::optional<wire::Message>> read_message_within(Connection& conn, std::chrono::milliseconds timeout);

// read_message_within for a connection that has not logged in: only HELLO, AUTH, ATTACH,
// ATTACH_PROOF and PING, of at most limits::max_login_frame payload bytes, else a protocol error
// before any of the payload is read or allocated.
awaitable<std::optional<wire::Message>> read_login_message_within(Connection& conn, std::chrono::milliseconds timeout);

// Throws the peer's error for ErrorMsg, a protocol error for any other type than T.
template <class T>
T expect(wire::Message&& message, const std::string& peer) {
  if (auto* t = std::get_if<T>(&message)) return std::move(*t);
  if (auto* e = std::get_if<wire::ErrorMsg>(&message)) throw Error(errc_from_wire(e->code), peer + ": " + log_safe(e->message));
  throw Error(Errc::protocol, std::string("unexpected ") + wire::type_name(wire::type_of(message)) + " from " + peer);
}

// Sends an ERROR frame, ignoring failure: used on the way out of a failed transfer.
awaitable<void> send_error_quietly(Connection& conn, const Error& error);

}  // namespace pxfer::net
