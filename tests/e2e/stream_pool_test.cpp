// The client's kept data connections (client/stream_pool.hpp): a stream takes only a connection
// made as it would make its own (TLS or clear, the same socket tuning), the one kept last first;
// a pool holds at most limits::idle_data_streams_kept. (The age limit and the reuse across files
// against a real pxferd: Session.* in session_test.cpp.)
#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

#include "client/stream_pool.hpp"
#include "pxfer/core/limits.hpp"

namespace pxfer {
namespace {

std::shared_ptr<net::Connection> unconnected(boost::asio::io_context& ioc) {
  return net::make_tcp_connection(boost::asio::ip::tcp::socket(ioc));
}

TEST(StreamPool, AStreamTakesOnlyAConnectionOfItsKindTheLastKeptFirst) {
  boost::asio::io_context ioc;
  StreamPool pool;
  const StreamPool::Kind clear{false, SocketTuning{}};
  const StreamPool::Kind tls{true, SocketTuning{}};
  const StreamPool::Kind pinned{false, SocketTuning{1u << 20, "", 0}};
  auto c1 = unconnected(ioc), c2 = unconnected(ioc), t1 = unconnected(ioc);
  pool.give(c1, clear);
  pool.give(t1, tls);
  pool.give(c2, clear);
  EXPECT_EQ(pool.take(pinned), nullptr) << "a connection with other buffers is not the stream's";
  EXPECT_EQ(pool.take(clear), c2);
  EXPECT_EQ(pool.take(tls), t1);
  EXPECT_EQ(pool.take(tls), nullptr);
  EXPECT_EQ(pool.take(clear), c1);
  EXPECT_EQ(pool.size(), 0u);
}

TEST(StreamPool, KeepsABoundedNumberDroppingTheOldest) {
  boost::asio::io_context ioc;
  StreamPool pool;
  const StreamPool::Kind clear{false, SocketTuning{}};
  auto oldest = unconnected(ioc);
  pool.give(oldest, clear);
  for (std::size_t i = 0; i < limits::idle_data_streams_kept; ++i) pool.give(unconnected(ioc), clear);
  EXPECT_EQ(pool.size(), limits::idle_data_streams_kept);
  for (std::size_t i = 0; i < limits::idle_data_streams_kept; ++i) EXPECT_NE(pool.take(clear), oldest);
  EXPECT_EQ(pool.take(clear), nullptr);
}

}  // namespace
}  // namespace pxfer
