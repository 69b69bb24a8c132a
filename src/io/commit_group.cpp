#include "io/commit_group.hpp"

#include <set>
#include <utility>

namespace pxfer {

void CommitGroup::add(std::unique_ptr<FileSink> sink) {
  sink->start_writeback();
  sinks_.push_back(std::move(sink));
}

std::vector<CommitGroup::Outcome> CommitGroup::commit() {
  std::vector<Outcome> out;
  out.reserve(sinks_.size());
  for (auto& sink : sinks_) {
    Outcome o;
    try {
      sink->flush();
    } catch (const Error& e) {
      o.error = e;
    }
    o.sink = std::move(sink);
    out.push_back(std::move(o));
  }
  sinks_.clear();
  // Renamed only once every file's data is on disk: the order of the single-file commit, kept
  // for each file of the group.
  for (auto& o : out) {
    if (o.error) continue;
    try {
      o.sink->place();
    } catch (const Error& e) {
      o.error = e;
    }
  }
  std::set<std::pair<std::uint64_t, std::uint64_t>> synced;
  for (auto& o : out)
    if (!o.error && synced.insert(o.sink->directory_id()).second) o.sink->sync_directory();
  return out;
}

}  // namespace pxfer
