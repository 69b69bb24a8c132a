#pragma once
// The TCP socket under a TLS stream, with a cork: while a message is being written, the records
// that Asio's TLS engine produces (one per 16 KiB, each handed down as a write of its own) gather
// here and leave in sends of up to `cork_limit` bytes, and the rest when the message ends (flush).
// Without it a 64 KiB small-file frame cost the sender five sends and the receiver as many
// wake-ups, reads and trips through its event loop (docs/performance.md section 9).
//
// Everything runs on the socket's executor (a strand): the TLS stream allows one write of its
// own at a time, and the only other writer is flush(), called by the message's writer once its
// last record is down. A record the engine writes for a read (TLS 1.3 post-handshake messages)
// while a flush is sending is queued behind it, never sent beside it.
#include <boost/asio/append.hpp>
#include <boost/asio/compose.hpp>
#include <boost/asio/defer.hpp>
#include <boost/asio/write.hpp>
#include <vector>

#include "connection.hpp"

namespace pxfer::net {

class CorkedSocket {
 public:
  using executor_type = tcp::socket::executor_type;
  using lowest_layer_type = tcp::socket::lowest_layer_type;

  static constexpr std::size_t cork_limit = 256 * 1024;

  explicit CorkedSocket(tcp::socket socket) : socket_(std::move(socket)) {}

  executor_type get_executor() { return socket_.get_executor(); }
  lowest_layer_type& lowest_layer() { return socket_.lowest_layer(); }
  const lowest_layer_type& lowest_layer() const { return socket_.lowest_layer(); }
  tcp::socket& socket() { return socket_; }

  // Writes from here on gather until flush().
  void cork() { corked_ = true; }

  template <class MutableBuffers, class Token>
  auto async_read_some(const MutableBuffers& buffers, Token&& token) {
    return socket_.async_read_some(buffers, std::forward<Token>(token));
  }

  template <class ConstBuffers, class Token>
  auto async_write_some(const ConstBuffers& buffers, Token&& token) {
    return asio::async_compose<Token, void(boost::system::error_code, std::size_t)>(WriteSome<ConstBuffers>{*this, buffers},
                                                                                   token, socket_);
  }

  // Uncorks and sends what gathered, and whatever is queued while it sends.
  template <class Token>
  auto async_flush(Token&& token) {
    return asio::async_compose<Token, void(boost::system::error_code)>(Flush{*this}, token, socket_);
  }

 private:
  template <class ConstBuffers>
  struct WriteSome {
    CorkedSocket& s;
    ConstBuffers buffers;
    enum { start, sent_gathered, appended, passed } step = start;
    std::size_t size = 0;

    template <class Self>
    void operator()(Self& self, boost::system::error_code ec = {}, std::size_t n = 0) {
      switch (step) {
        case start:
          size = asio::buffer_size(buffers);
          if (!s.corked_ && !s.flushing_) {  // outside a message (the handshake): straight through
            step = passed;
            return s.socket_.async_write_some(buffers, std::move(self));
          }
          if (!s.flushing_ && !s.pending_.empty() && s.pending_.size() + size > cork_limit) {
            step = sent_gathered;  // full: out with what gathered first
            s.sending_.swap(s.pending_);
            return asio::async_write(s.socket_, asio::buffer(s.sending_), std::move(self));
          }
          s.append(buffers);
          step = appended;
          return asio::defer(s.socket_.get_executor(), std::move(self));  // never complete inside the call
        case sent_gathered:
          s.sending_.clear();
          if (ec) return self.complete(ec, 0);
          s.append(buffers);
          return self.complete({}, size);
        case appended:
          return self.complete({}, size);
        case passed:
          return self.complete(ec, n);
      }
    }
  };

  struct Flush {
    CorkedSocket& s;
    enum { start, idle, sending } step = start;

    template <class Self>
    void operator()(Self& self, boost::system::error_code ec = {}, std::size_t = 0) {
      switch (step) {
        case start:
          s.corked_ = false;
          s.flushing_ = true;
          if (s.pending_.empty()) {
            step = idle;
            return asio::defer(s.socket_.get_executor(), std::move(self));  // never complete inside the call
          }
          break;
        case idle:
          break;
        case sending:
          s.sending_.clear();
          if (ec) {
            s.flushing_ = false;
            s.pending_.clear();
            return self.complete(ec);
          }
          break;
      }
      if (s.pending_.empty()) {  // and whatever was queued while it sent has gone too
        s.flushing_ = false;
        return self.complete({});
      }
      step = sending;
      s.sending_.swap(s.pending_);
      asio::async_write(s.socket_, asio::buffer(s.sending_), std::move(self));
    }
  };

  template <class ConstBuffers>
  void append(const ConstBuffers& buffers) {
    for (auto it = asio::buffer_sequence_begin(buffers); it != asio::buffer_sequence_end(buffers); ++it) {
      const auto* p = static_cast<const std::uint8_t*>((*it).data());
      pending_.insert(pending_.end(), p, p + (*it).size());
    }
  }

  tcp::socket socket_;
  std::vector<std::uint8_t> pending_;  // gathered, not yet handed to the socket
  std::vector<std::uint8_t> sending_;  // handed to the socket, write in progress
  bool corked_ = false;
  bool flushing_ = false;
};

}  // namespace pxfer::net
