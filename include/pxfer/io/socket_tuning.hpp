#pragma once
// Socket buffer sizes and TCP state of one stream, through plain setsockopt/getsockopt on a
// native descriptor (no Asio here, so the pure layers and the CLI can use it).
#include "pxfer/io/layer.hpp"
#include <cstdint>
#include <string>

#include "pxfer/core/socket_options.hpp"

namespace pxfer {

// Applies `tuning` (before connect() on a client socket, right after accept() on a server one)
// and returns the buffers granted. Throws Error(usage) for an unknown congestion control,
// naming the available ones.
BufferGrant tune_socket(int fd, const SocketTuning& tuning);
// net.ipv4.tcp_available_congestion_control, e.g. "reno cubic bbr".
std::string available_congestion_controls();
// net.ipv4.tcp_congestion_control of this process's network namespace, as it was when first read:
// what a socket without TCP_CONGESTION uses.
const std::string& system_congestion_control();
// The congestion control in use on a socket.
std::string congestion_of(int fd);

// Pins SO_SNDBUF/SO_RCVBUF to `window` (nothing when 0) and reads back what the kernel granted.
// Must be called before connect() on a client socket so the window scale is chosen for it.
BufferGrant apply_window(int fd, std::uint32_t window);
BufferGrant read_buffers(int fd, std::uint32_t requested = 0);
// Pins SO_SNDBUF of a connected socket at `bytes` (autotuning stops for it) and returns what the
// kernel granted: twice the request, at most twice net.core.wmem_max (core/send_window.hpp).
std::uint32_t pin_send_buffer(int fd, std::uint32_t bytes);
// The warning for a grant below what was requested ("" when the kernel granted it in full);
// `where` names the host ("the kernel" / "the server's kernel").
std::string clamp_warning(const BufferGrant& grant, const std::string& where = "the kernel");
// "snd 2.0 MiB / rcv 4.0 MiB" or "auto (snd ... / rcv ...)".
std::string describe(const BufferGrant& grant);

bool read_tcp_info(int fd, TcpSnapshot& out);

// Closing the socket then drops what it has not delivered and resets the connection (SO_LINGER 0),
// instead of the kernel delivering it for seconds after: for a stream whose data is redundant.
void abort_on_close(int fd);
// Enables TCP keepalive so idle control connections survive stateful firewalls.
void enable_keepalive(int fd, int idle_seconds);

}  // namespace pxfer
