// PUT_SMALL and GET_SMALL (cap_small_files): a small file moved whole in one frame on the TLS
// control connection, many in flight (docs/protocol.md "Small files"). The rules of every other
// transfer hold: an admission slot, the drain, the export root's confinement, a hidden temporary
// that takes the final name only once verified and durable, one accounting line. What a file of
// one frame does without: data streams and their keys and tags, HAVE, COMMIT, the engine's
// watchers, and a round trip of its own (docs/performance.md section 8).
#include <spdlog/spdlog.h>

#include <cstdio>
#include <functional>
#include <optional>

#include "accounting.hpp"
#include "pxfer/checksum.hpp"
#include "transfer_service.hpp"

namespace pxfer::server {
net::awaitable<std::unique_ptr<Admission::Slot>> TransferService::admit_small(std::shared_ptr<net::Connection> control,
                                                                               const std::string& path) {
  refuse_if_draining();
  std::uint16_t streams = 1;
  auto slot = co_await wait_for_slot(control, path, streams, true, false);
  refuse_if_draining();  // a drain that began while it waited
  co_return slot;
}

void TransferService::account_small(net::Connection& conn, bool put, const std::string& path, std::uint32_t id,
                                    std::uint8_t checksum, const Who& who, Clock::time_point start, std::uint64_t bytes,
                                    const std::string& value, const std::optional<Error>& failure) {
  char hex[9];
  std::snprintf(hex, sizeof hex, "%08x", id);
  TransferAccount a = account_of(conn, path, put, 0, checksum, who, hex);
  a.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  const std::uint64_t moved = failure ? 0 : bytes;
  a.bytes = moved;
  a.rate_mbps = a.seconds > 0 ? static_cast<double>(moved) / a.seconds / 1e6 : 0;
  metrics_.transfer_ended(put, failure ? Outcome::failed : Outcome::ok, moved);
  metrics_.transfer_details(put, who.identity, moved, failure ? std::optional<Errc>(failure->code()) : std::nullopt, 0);
  if (failure) {
    set_error(a, "failed", *failure);
    spdlog::warn("{}", logfmt_line(a));
    return;
  }
  a.checksum = value;
  a.result = "ok";
  spdlog::info("{}", logfmt_line(a));
}

net::awaitable<wire::Message> TransferService::put_small(std::shared_ptr<net::Connection> control, wire::PutSmall& m, const Who& who) {
  net::Connection& conn = *control;
  InService counted(in_service_);
  const auto start = Clock::now();
  wire::PutSmallOk answer;
  answer.id = m.id;
  std::optional<Error> failure;
  try {
    if (m.flags & ~static_cast<std::uint32_t>(wire::open_overwrite | wire::open_sync))
      throw Error(Errc::protocol, "PUT_SMALL of " + m.path + " with flags other than overwrite and sync");
    auto slot = co_await admit_small(control, m.path);
    // Marked as running until it ends, so that a retry through OPEN waits for it (take_over).
    struct Running {
      TransferRegistry& registry;
      const wire::Token& id;
      const std::string owner;
      ~Running() { registry.remove_small(id, owner); }
    } running{registry_, m.transfer_id, who.identity + '\n' + m.path};
    registry_.add_small(m.transfer_id, running.owner);
    // Written, checked and renamed on the blocking pool: a slow disk never holds a network thread.
    // A mismatch leaves nothing behind (the sink removes its temporary).
    std::function<void()> store = [&] {
      SinkOptions options = sink_options(m.flags | wire::open_no_resume, 0, 0);
      options.reserve = false;  // written in one piece right away
      FileSink sink(root_, m.path, m.data.size(), options);
      if (!m.data.empty()) sink.write_at(0, m.data);
      answer.value = checksum_of_bytes(static_cast<ChecksumAlgo>(m.checksum), m.data);
      if (answer.value != m.value)
        throw Error(Errc::integrity, m.path + ": checksum mismatch: received " + answer.value + ", the client sent " +
                                         m.value.substr(0, 128));
      sink.commit();
      // A retry (with OPEN) of this put, after its answer was lost with the connection, is
      // answered from this record instead of failing on the file it finds in place.
      const auto placed = sink.placed();  // from the descriptor: no second open of the path
      registry_.add_committed(m.transfer_id, TransferRegistry::Committed{running.owner, m.data.size(),
                                                                          m.mtime_ns, m.checksum, answer.value,
                                                                          placed.inode, placed.mtime_ns});
    };
    co_await blocking_.run(store);
  } catch (const Error& e) {
    failure = e;
  }
  account_small(conn, true, m.path, m.id, m.checksum, who, start, m.data.size(), answer.value, failure);
  if (failure) {
    answer.code = static_cast<std::uint16_t>(failure->code());
    answer.message = failure->what();
  }
  co_return answer;
}

net::awaitable<wire::Message> TransferService::get_small(std::shared_ptr<net::Connection> control, wire::GetSmall& m, const Who& who) {
  net::Connection& conn = *control;
  InService counted(in_service_);
  const auto start = Clock::now();
  wire::GetSmallOk answer;
  answer.id = m.id;
  std::optional<Error> failure;
  try {
    auto slot = co_await admit_small(control, m.path);
    // A path the kernel has cached opens here, and the file is read here as the engine reads a
    // block (docs/performance.md section 5); anything else opens and reads on the blocking pool.
    std::optional<FileSource> source = FileSource::open_if_cached(root_, m.path);
    const bool inline_read = source.has_value();
    std::function<void()> read = [&] {
      if (!source) source.emplace(root_, m.path);
      answer.size = source->size();
      answer.mtime_ns = source->mtime_ns();
      if (answer.size > wire::max_small_file) {
        answer.too_large = 1;  // grew since the client listed it: it moves with OPEN
        return;
      }
      answer.data.resize(answer.size);
      if (!answer.data.empty()) source->read_at(0, answer.data);
      source->check_unchanged();
      answer.value = checksum_of_bytes(static_cast<ChecksumAlgo>(m.checksum), answer.data);
    };
    if (inline_read) read();
    else co_await blocking_.run(read);
  } catch (const Error& e) {
    failure = e;
  }
  if (failure) {
    answer = wire::GetSmallOk{};
    answer.id = m.id;
    answer.code = static_cast<std::uint16_t>(failure->code());
    answer.message = failure->what();
  }
  if (!answer.too_large)
    account_small(conn, false, m.path, m.id, m.checksum, who, start, answer.size, answer.value, failure);
  co_return answer;
}

}  // namespace pxfer::server
