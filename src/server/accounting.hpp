#pragma once
// pxferd's accounting line: one logfmt line per transfer that ends (ok, failed or refused), with
// stable keys (docs/operations.md) that log shippers and scripts can rely on. Pure formatting.
#include "pxfer/server/layer.hpp"
#include <cstdint>
#include <string>
#include <string_view>

namespace pxfer::server {

struct TransferAccount {
  std::string id;         // the transfer's id: 8 hex digits of its session token
  std::string client;     // address:port
  std::string identity;   // who the client authenticated as
  std::string agent;      // the client's version, from its HELLO
  std::string path;
  std::string direction;  // put | get
  std::uint64_t bytes = 0;    // the file's size (ok) or what moved (failed)
  std::uint64_t resumed = 0;  // already at the receiver from an earlier attempt
  std::uint64_t recovered_streams = 0;
  double seconds = 0;
  unsigned streams = 0;
  double rate_mbps = 0;       // MB/s, 10^6 bytes
  std::string checksum_algo;  // adler32 | sha256 | none
  std::string checksum;       // hex, "" when none
  std::string result;         // ok | failed | refused
  std::string error_class;    // errc_name, "" when ok
  std::string error;          // the message, "" when ok
};

// `value` as a logfmt value: bare when it is a plain token, else in double quotes with `"` and
// `\` escaped; control characters always escaped (\n, \t, \xHH), so a value never ends a line.
std::string logfmt_value(std::string_view value);

// "transfer=ID client=... identity=... agent=... path=... direction=... bytes=... resumed=...
// recovered_streams=... seconds=... streams=... rate=...MB/s checksum_algo=... checksum=...
// result=..." and, when it failed, "error_class=... error=...".
std::string logfmt_line(const TransferAccount& a);

}  // namespace pxfer::server
