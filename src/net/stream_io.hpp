#pragma once
// The byte loops shared by every Connection over an Asio stream (plain TCP, TLS): reads and
// writes cut into 1 MiB pieces so progress counters (rate lines) move smoothly even with 16 MiB
// blocks. `lost` turns an error code into the connection's own pxfer::Error.
#include "pxfer/io/layer.hpp"
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/buffer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "connection.hpp"

namespace pxfer::net {

inline constexpr std::size_t stream_chunk = 1 << 20;

template <class Stream, class Lost>
awaitable<void> read_exact_on(Stream& stream, std::span<std::uint8_t> out, std::atomic<std::uint64_t>* progress,
                              Lost lost) {
  std::size_t done = 0;
  while (done < out.size()) {
    auto [ec, n] = co_await stream.async_read_some(
        asio::buffer(out.data() + done, std::min(out.size() - done, stream_chunk)), asio::as_tuple(asio::use_awaitable));
    if (ec) throw lost(ec);
    done += n;
    if (progress) progress->fetch_add(n, std::memory_order_relaxed);
  }
}

template <class Stream, class Lost>
awaitable<void> write_all_on(Stream& stream, std::span<const std::uint8_t> data, std::atomic<std::uint64_t>* progress,
                             Lost lost) {
  std::size_t done = 0;
  while (done < data.size()) {
    auto [ec, n] = co_await stream.async_write_some(
        asio::buffer(data.data() + done, std::min(data.size() - done, stream_chunk)), asio::as_tuple(asio::use_awaitable));
    if (ec) throw lost(ec);
    done += n;
    if (progress) progress->fetch_add(n, std::memory_order_relaxed);
  }
}

}  // namespace pxfer::net
