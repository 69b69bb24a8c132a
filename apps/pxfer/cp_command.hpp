#pragma once
// pxfer cp [options] SRC... DST: one copy verb, as scp, xrdcp, gfal-copy and globus-url-copy have.
// Which side is local decides put or get; put and get remain the explicit forms and do the work.
#include <sys/stat.h>

#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "pxfer/common/error.hpp"
#include "pxfer/common/url.hpp"

namespace pxfer::cli {

// One put or get of `source` to `dest` (as put/get take them); returns the exit status.
using TransferRun = std::function<int(bool is_put, const std::string& source, const std::string& dest)>;
// One third-party copy of the URL `source` to the URL `dest`; returns the exit status.
using ThirdPartyRun = std::function<int(const std::string& source, const std::string& dest)>;

// pxfer:// -> pxfer://: the servers copy between themselves (pxfer/tpc/tpc.hpp).
inline bool cp_third_party(const std::vector<std::string>& paths) {
  for (const auto& p : paths)
    if (!looks_like_url(p)) return false;
  return paths.size() >= 2;
}

// Which direction `paths` (SRC... DST) ask for: true = put. Throws Error(usage) for local -> local,
// for a mix of local and remote sources, and for pxfer:// -> pxfer:// (cp_third_party's case).
inline bool cp_direction(const std::vector<std::string>& paths) {
  const std::string& dest = paths.back();
  const bool dest_remote = looks_like_url(dest);
  const bool first_remote = looks_like_url(paths.front());
  for (std::size_t i = 0; i + 1 < paths.size(); ++i)
    if (looks_like_url(paths[i]) != first_remote)
      throw Error(Errc::usage, "cp: the sources mix local files and pxfer:// URLs; give one kind per command");
  if (first_remote && dest_remote)
    throw Error(Errc::usage, "cp " + paths.front() + " " + dest + ": give every source as a pxfer:// URL for a copy "
                                 "between two servers (third-party copy)");
  if (!first_remote && !dest_remote)
    throw Error(Errc::usage, "cp " + paths.front() + " " + dest + ": one side must be a pxfer:// URL (cp(1) copies locally)");
  return dest_remote;
}

inline bool local_directory(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// Several sources go into DST, which then names a directory (a trailing / is added to a URL;
// a local DST must be an existing directory). Every source is tried; the first failure's status is
// the command's.
inline int run_cp(const std::vector<std::string>& paths, bool from_file, const TransferRun& run,
                  const ThirdPartyRun& third_party = {}) {
  if (from_file) {
    if (!paths.empty()) throw Error(Errc::usage, "cp --from-file takes no SRC or DST on the command line");
    return run(true, "", "");  // each line of the list says its own direction
  }
  if (paths.size() < 2) throw Error(Errc::usage, "cp needs SRC... DST (or --from-file LIST); see pxfer cp --help");
  if (third_party && cp_third_party(paths)) {
    std::string dest = paths.back();
    if (paths.size() > 2 && !dest.ends_with('/')) dest += '/';
    int status = 0;
    for (std::size_t i = 0; i + 1 < paths.size(); ++i) {
      const int s = third_party(paths[i], dest);
      if (s != 0 && status == 0) status = s;
    }
    return status;
  }
  const bool is_put = cp_direction(paths);
  std::string dest = paths.back();
  const std::size_t sources = paths.size() - 1;
  if (sources > 1) {
    if (is_put && !dest.ends_with('/')) dest += '/';
    if (!is_put && !local_directory(dest))
      throw Error(Errc::usage, "cp: " + dest + " must be an existing directory when several sources are given");
  }
  int status = 0;
  for (std::size_t i = 0; i < sources; ++i) {
    const int s = run(is_put, paths[i], dest);
    if (s != 0 && status == 0) status = s;
  }
  return status;
}

}  // namespace pxfer::cli
