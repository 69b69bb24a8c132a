#pragma once
// pxferd's transfers: admission (a slot, QUEUED frames while waiting), opening the file, OPEN_OK,
// the engine on the control connection, the data streams that ATTACH to it, and the one log line
// per transfer. Owns the registry of running transfers.
#include <memory>

#include "admission.hpp"
#include "blocking_pool.hpp"
#include "metrics.hpp"
#include "net/connection.hpp"
#include "pxfer/file_io.hpp"
#include "pxfer/rate_pacer.hpp"
#include "pxfer/server.hpp"
#include "pxfer/wire.hpp"
#include "transfer_registry.hpp"

namespace pxfer::server {

class TransferService {
 public:
  TransferService(const ServerOptions& options, const Directory& root, std::shared_ptr<Admission> admission,
                  Metrics& metrics, BlockingPool& blocking);

  // One OPEN on a control connection, to its end. A refusal is sent as ERROR and the session goes
  // on; a failure midway is sent and thrown (the control connection is in an unknown state).
  // `who` (identity and client version) goes into the accounting line.
  struct Who {
    std::string identity;
    std::string agent;
  };
  net::awaitable<void> serve(std::shared_ptr<net::Connection> control, wire::Open& open, std::uint64_t caps,
                             const Who& who);
  // A data connection whose first frame was ATTACH.
  net::awaitable<void> attach(std::shared_ptr<net::Connection> conn, const wire::Attach& attach);
  // Ends every running transfer with `why` (shutdown).
  void abort_all(const Error& why);

 private:
  // The file a transfer reads (a get) or writes (a put), opened on the blocking pool.
  struct OpenedFile {
    std::unique_ptr<FileSource> source;
    std::unique_ptr<FileSink> sink;
  };
  OpenedFile open_file(const wire::Open& open);
  std::shared_ptr<transfer::Transfer> open_transfer(wire::Open& open, std::uint64_t caps, boost::asio::any_io_executor ex,
                                                    OpenedFile file);
  net::awaitable<std::shared_ptr<transfer::Transfer>> open_off_thread(wire::Open& open, std::uint64_t caps);
  net::awaitable<std::unique_ptr<Admission::Slot>> wait_for_slot(std::shared_ptr<net::Connection> conn, wire::Open& open,
                                                                 std::uint64_t caps);
  wire::Message open_ok_for(const wire::Token& token, const transfer::Transfer& t, const wire::Open& open,
                            std::uint64_t caps) const;

  const ServerOptions& options_;
  const Directory& root_;
  std::shared_ptr<Admission> admission_;
  Metrics& metrics_;
  RatePacer disk_pacer_;  // --emulate-disk-rate
  TransferRegistry registry_;
  BlockingPool& blocking_;
};

// The client as admission control counts it: its address (an IPv4-mapped IPv6 address as IPv4).
std::string client_address(net::Connection& conn);

}  // namespace pxfer::server
