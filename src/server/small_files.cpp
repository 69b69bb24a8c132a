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
#include "io/commit_group.hpp"
#include "io/stored_checksum.hpp"
#include "pxfer/core/checksum.hpp"
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
  metrics_.transfer_ended(put, failure ? Outcome::failed : Outcome::ok, moved,
                          failure ? std::optional<Errc>(failure->code()) : std::nullopt);
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

std::unique_ptr<FileSink> TransferService::store_small(wire::PutSmall& m, wire::PutSmallOk& answer,
                                                       ParentDirectories& parents) {
  if (m.flags & ~static_cast<std::uint32_t>(wire::open_overwrite | wire::open_sync))
    throw Error(Errc::protocol, "PUT_SMALL of " + m.path + " with flags other than overwrite and sync");
  // A mismatch leaves nothing behind (the sink removes its temporary).
  SinkOptions options = sink_options(m.flags | wire::open_no_resume, 0, 0);
  options.reserve = false;          // written in one piece right away
  options.watch_directory = false;  // no blocks in between; a batch holds many such sinks
  options.new_directory = made_directories_.holds_parent_of(m.path);
  auto sink = std::make_unique<FileSink>(parents.target(m.path), m.path, m.data.size(), options);
  if (!m.data.empty()) sink->write_at(0, m.data);
  answer.value = checksum_of_bytes(static_cast<ChecksumAlgo>(m.checksum), m.data);
  if (answer.value != m.value)
    throw Error(Errc::integrity, m.path + ": checksum mismatch: received " + answer.value + ", the client sent " +
                                     m.value.substr(0, 128));
  sink->set_checksum(static_cast<ChecksumAlgo>(m.checksum), answer.value);
  return sink;
}

void TransferService::load_small(wire::GetSmall& m, std::optional<FileSource>& source, wire::GetSmallOk& answer) {
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
  // A stored checksum (io/stored_checksum.hpp) is what the client compares with, as in a large
  // get; none is recorded here: a read-only batch of gets must not turn into as many inode writes.
  const auto algo = static_cast<ChecksumAlgo>(m.checksum);
  std::optional<std::string> stored;
  if (options_.stored_checksums) stored = stored_checksum(source->fd(), algo);
  answer.value = stored ? std::move(*stored) : checksum_of_bytes(algo, answer.data);
}

namespace {
std::string owner_of(const TransferService::Who& who, const std::string& path) { return who.identity + '\n' + path; }

// Marks the batch's puts as running under their transfer ids until the batch ends, so that a
// retry through OPEN waits for them (take_over).
struct RunningPuts {
  TransferRegistry& registry;
  std::vector<std::pair<wire::Token, std::string>> marks;
  ~RunningPuts() {
    for (const auto& [id, owner] : marks) registry.remove_small(id, owner);
  }
  void add(const wire::Token& id, std::string owner) {
    registry.add_small(id, owner);
    marks.emplace_back(id, std::move(owner));
  }
};
const std::string& path_of(const wire::Message& request) {
  if (auto* put = std::get_if<wire::PutSmall>(&request)) return put->path;
  return std::get<wire::GetSmall>(request).path;
}

// Opens the batch's gets whose files the kernel has cached, in order, until their sizes add up to
// limits::small_batch_bytes, and returns where that is: the requests from there on wait for the
// next trip (serve_small stops there), so a file is opened once, not again on every trip before
// its own. `inline_reads` turns false when a get before that point is not cached.
std::size_t open_cached_gets(const Directory& root, const std::vector<wire::Message>& requests,
                             const std::vector<std::size_t>& served, std::vector<std::optional<FileSource>>& sources,
                             bool& inline_reads) {
  std::uint64_t planned = 0;
  for (std::size_t i : served) {
    if (!std::holds_alternative<wire::GetSmall>(requests[i])) continue;
    auto cached = FileSource::open_if_cached(root, path_of(requests[i]));
    if (!cached) {
      inline_reads = false;
      continue;
    }
    planned += cached->size();
    sources[i].emplace(std::move(*cached));
    if (planned >= limits::small_batch_bytes) return i + 1;
  }
  return requests.size();
}

// Each request's answer as it starts: the session's refusal, or an empty answer with the
// request's id. Returns the requests to serve.
std::vector<std::size_t> first_answers(const std::vector<wire::Message>& requests,
                                       std::vector<std::optional<wire::Message>>& refusals,
                                       std::vector<wire::Message>& answers) {
  std::vector<std::size_t> served;
  for (std::size_t i = 0; i < requests.size(); ++i) {
    if (refusals[i]) {
      answers[i] = std::move(*refusals[i]);
      continue;
    }
    served.push_back(i);
    if (auto* put = std::get_if<wire::PutSmall>(&requests[i])) {
      wire::PutSmallOk answer;
      answer.id = put->id;
      answers[i] = std::move(answer);
    } else {
      wire::GetSmallOk answer;
      answer.id = std::get<wire::GetSmall>(requests[i]).id;
      answers[i] = std::move(answer);
    }
  }
  return served;
}
}  // namespace

void TransferService::settle_small(net::Connection& conn, std::vector<wire::Message>& requests,
                                   std::vector<wire::Message>& answers, const std::vector<std::optional<Error>>& failures,
                                   const std::vector<std::size_t>& served, const Who& who, Clock::time_point start) {
  for (std::size_t i : served) {
    const auto& failure = failures[i];
    if (auto* put = std::get_if<wire::PutSmall>(&requests[i])) {
      auto& answer = std::get<wire::PutSmallOk>(answers[i]);
      account_small(conn, true, put->path, put->id, put->checksum, who, start, put->data.size(), answer.value, failure);
      if (failure) {
        answer.code = static_cast<std::uint16_t>(failure->code());
        answer.message = failure->what();
      }
      continue;
    }
    auto& get = std::get<wire::GetSmall>(requests[i]);
    auto& answer = std::get<wire::GetSmallOk>(answers[i]);
    if (failure) {
      answer = wire::GetSmallOk{};
      answer.id = get.id;
      answer.code = static_cast<std::uint16_t>(failure->code());
      answer.message = failure->what();
    }
    if (!answer.too_large)
      account_small(conn, false, get.path, get.id, get.checksum, who, start, answer.size, answer.value, failure);
  }
}

// Reads the batch's gets and writes its puts, then commits the puts together (io/commit_group.hpp):
// each put is answered only once its file is durable under its final name.
std::size_t TransferService::serve_small(std::vector<wire::Message>& requests, std::vector<wire::Message>& answers,
                                         std::vector<std::optional<Error>>& failures,
                                         const std::vector<std::size_t>& served,
                                         std::vector<std::optional<FileSource>>& sources, const Who& who,
                                         std::size_t window) {
  CommitGroup group;
  ParentDirectories parents(root_);  // a batch's puts mostly land in one directory: opened once
  std::vector<std::size_t> grouped;  // the request of each file in the group
  std::size_t end = requests.size();
  std::uint64_t read = 0;  // bytes of the gets read so far
  for (std::size_t i : served) {
    if (i >= window || read >= limits::small_batch_bytes) {
      end = i;  // this request and the ones after it wait for the next trip
      break;
    }
    try {
      if (auto* put = std::get_if<wire::PutSmall>(&requests[i])) {
        group.add(store_small(*put, std::get<wire::PutSmallOk>(answers[i]), parents));
        grouped.push_back(i);
      } else {
        auto& answer = std::get<wire::GetSmallOk>(answers[i]);
        load_small(std::get<wire::GetSmall>(requests[i]), sources[i], answer);
        read += answer.data.size();
      }
    } catch (const Error& e) {
      failures[i] = e;
    } catch (const std::exception& e) {
      failures[i] = Error(Errc::internal, path_of(requests[i]) + ": " + e.what());
    }
  }
  commit_small(requests, answers, failures, group, grouped, who);
  return end;
}

void TransferService::commit_small(std::vector<wire::Message>& requests, std::vector<wire::Message>& answers,
                                   std::vector<std::optional<Error>>& failures, CommitGroup& group,
                                   const std::vector<std::size_t>& grouped, const Who& who) {
  if (group.empty()) return;
  auto outcomes = group.commit();
  for (std::size_t k = 0; k < outcomes.size(); ++k) {
    const std::size_t i = grouped[k];
    if (outcomes[k].error) {
      failures[i] = outcomes[k].error;
      continue;
    }
    // A retry (with OPEN) of this put, after its answer was lost with the connection, is answered
    // from this record instead of failing on the file it finds in place.
    const auto& put = std::get<wire::PutSmall>(requests[i]);
    const auto placed = outcomes[k].sink->placed();  // from the descriptor: no second open of the path
    registry_.add_committed(put.transfer_id,
                            TransferRegistry::Committed{owner_of(who, put.path), put.data.size(), put.mtime_ns, put.checksum,
                                                        std::get<wire::PutSmallOk>(answers[i]).value, placed.inode,
                                                        placed.mtime_ns});
  }
}

net::awaitable<std::vector<wire::Message>> TransferService::small_files(
    std::shared_ptr<net::Connection> control, std::vector<wire::Message>& requests,
    std::vector<std::optional<wire::Message>>& refusals, const Who& who) {
  InService counted(in_service_);
  const auto start = Clock::now();
  const std::size_t n = requests.size();
  std::size_t end = n;  // the requests answered on this trip: [0, end)
  metrics_.small_batches.fetch_add(1, std::memory_order_relaxed);
  std::vector<wire::Message> answers(n);
  std::vector<std::optional<Error>> failures(n);
  const std::vector<std::size_t> served = first_answers(requests, refusals, answers);
  if (served.empty()) {
    metrics_.small_files.fetch_add(n, std::memory_order_relaxed);
    co_return answers;
  }
  std::optional<Error> refused;
  std::unique_ptr<Admission::Slot> slot;
  try {
    slot = co_await admit_small(control, path_of(requests[served.front()]));  // one slot: a connection's requests run one after the other
  } catch (const Error& e) {
    refused = e;
  }
  RunningPuts running{registry_, {}};
  if (refused) {
    for (std::size_t i : served) failures[i] = *refused;
  } else {
    // A get whose path the kernel has cached opens here; when every file of the batch is such a
    // get, the batch is read here too (docs/performance.md section 5), else it all goes to the
    // blocking pool in one trip: a slow disk never holds a network thread.
    std::vector<std::optional<FileSource>> sources(n);
    bool inline_reads = true;
    const std::size_t window = open_cached_gets(root_, requests, served, sources, inline_reads);
    for (std::size_t i : served) {
      if (auto* put = std::get_if<wire::PutSmall>(&requests[i])) {
        running.add(put->transfer_id, owner_of(who, put->path));
        if (i < window) inline_reads = false;
      }
    }
    std::function<void()> work = [&] { end = serve_small(requests, answers, failures, served, sources, who, window); };
    if (inline_reads) work();
    else co_await blocking_.run(work, who.identity);
  }
  std::vector<std::size_t> answered;
  for (std::size_t i : served)
    if (i < end) answered.push_back(i);
  settle_small(*control, requests, answers, failures, answered, who, start);
  metrics_.small_files.fetch_add(end, std::memory_order_relaxed);
  answers.resize(end);
  co_return answers;
}

}  // namespace pxfer::server
