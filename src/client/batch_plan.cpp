// What a multi-file run will do, worked out before anything moves: the directories to create and
// the exact source and destination of every file.
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "pxfer/client/batch.hpp"
#include "client/remote_tree.hpp"
#include "client/listing_check.hpp"
#include "common/safe_path.hpp"

namespace pxfer {
namespace fs = std::filesystem;

namespace {

std::string without_trailing_slashes(std::string path) {
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  return path;
}

std::string last_component(const std::string& path) {
  std::string p = without_trailing_slashes(path);
  auto slash = p.rfind('/');
  return slash == std::string::npos ? p : p.substr(slash + 1);
}

// "a" + "b" = "a/b"; an empty side leaves the other unchanged.
std::string join(const std::string& base, const std::string& relative) {
  std::string b = base.empty() ? base : without_trailing_slashes(base);
  if (relative.empty()) return b;
  if (b.empty()) return relative;
  return b.back() == '/' ? b + relative : b + "/" + relative;
}

Url at_path(const Url& server, const std::string& path) {
  Url u = server;
  u.path = path;
  u.trailing_slash = false;
  return u;
}

bool is_local_directory(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// The iterator's paths are local_dir followed by the names below it: the part after local_dir,
// without asking the file system. fs::relative canonicalizes both paths, a readlink per path
// component of every file (9 per file in a 10,000-file put -r, docs/performance.md section 5).
std::string relative_below(const fs::path& path, const std::string& local_dir) {
  const std::string& text = path.native();
  if (text.size() > local_dir.size() && text.compare(0, local_dir.size(), local_dir) == 0) {
    std::string rest = text.substr(local_dir.size());
    const auto start = rest.find_first_not_of('/');
    if (start != std::string::npos && (start > 0 || local_dir.ends_with('/'))) return rest.substr(start);
  }
  std::error_code ec;
  return fs::relative(path, local_dir, ec).generic_string();
}

}  // namespace

BatchPlan plan_recursive_put(const std::string& local_dir, const Url& destination) {
  std::error_code ec;
  if (!fs::is_directory(fs::symlink_status(local_dir, ec)) && !is_local_directory(local_dir))
    throw Error(fs::exists(local_dir, ec) ? Errc::usage : Errc::not_found,
                local_dir + ": not a directory; -r copies a directory (drop -r to copy one file)");
  const std::string base = destination.trailing_slash ? join(destination.path, last_component(local_dir)) : destination.path;
  BatchPlan plan;
  if (!base.empty()) plan.remote_directories.push_back(at_path(destination, base));
  // Directories are never followed through symlinks: the walk stays inside local_dir.
  fs::recursive_directory_iterator it(local_dir, fs::directory_options::none, ec), end;
  if (ec) throw Error(errc_from_errno(ec.value()), "cannot read directory " + local_dir + ": " + ec.message());
  for (; it != end; it.increment(ec)) {
    if (ec) throw Error(errc_from_errno(ec.value()), "cannot read below " + local_dir + ": " + ec.message());
    const auto status = it->symlink_status(ec);
    const std::string relative = relative_below(it->path(), local_dir);
    if (fs::is_directory(status)) {
      plan.remote_directories.push_back(at_path(destination, join(base, relative)));
    } else if (fs::is_regular_file(status)) {
      BatchFile file;
      file.direction = Direction::put;
      file.local = it->path().string();
      file.remote = at_path(destination, join(base, relative));
      if (auto size = it->file_size(ec); !ec) file.source_size = size;
      plan.files.push_back(std::move(file));
    }
  }
  return plan;
}

BatchPlan plan_recursive_get(const Url& source, const std::string& local_dir, std::chrono::milliseconds connect_timeout) {
  std::vector<wire::ListEntry> entries;
  try {
    entries = list_remote(source, connect_timeout);
  } catch (const Error& e) {
    if (e.code() == Errc::network) throw;  // already says where and what to do
    throw Error(e.code(), "cannot list " + source.to_string() + ": " + e.what() + "; check the path on the server");
  }
  // The server names the local files: nothing it sent may climb out of the target (issue 11).
  check_listing(entries, source.authority());
  if (entries.size() == 1 && entries.front().relative_path.empty())
    throw Error(Errc::usage, source.to_string() + ": names a file; -r copies a directory (drop -r to copy one file)");
  const std::string base = local_dir.ends_with('/') ? join(local_dir, last_component(source.path)) : local_dir;
  BatchPlan plan;
  plan.local_root = without_trailing_slashes(base);
  plan.local_directories.push_back(base);
  for (const auto& e : entries) {
    if (e.kind == wire::EntryKind::directory) {
      plan.local_directories.push_back(join(base, e.relative_path));
      continue;
    }
    BatchFile file;
    file.direction = Direction::get;
    file.local = join(base, e.relative_path);
    file.remote = at_path(source, join(source.path, e.relative_path));
    file.source_size = e.size;
    file.mode = e.mode & 0777;  // --preserve never takes set-id or sticky bits from a server
    file.mtime_ns = e.mtime_ns;
    plan.files.push_back(std::move(file));
  }
  return plan;
}

BatchPlan parse_transfer_list(const std::string& text, const std::string& list_name) {
  BatchPlan plan;
  std::istringstream in(text);
  std::size_t number = 0;
  for (std::string line; std::getline(in, line);) {
    ++number;
    const std::string where = list_name + ":" + std::to_string(number);
    std::istringstream words(line);
    std::string source, dest, extra;
    words >> source;
    if (source.empty() || source.front() == '#') continue;
    words >> dest >> extra;
    if (dest.empty() || (!extra.empty() && extra.front() != '#'))
      throw Error(Errc::usage, where + ": expected 'SOURCE DEST' (two words, one of them a pxfer:// URL)");
    const bool put = looks_like_url(dest), get = looks_like_url(source);
    if (put == get)
      throw Error(Errc::usage, where + ": exactly one of SOURCE and DEST must be a pxfer:// URL");
    std::string why;
    auto url = parse_url(put ? dest : source, &why);
    if (!url) throw Error(Errc::usage, where + ": " + (put ? dest : source) + ": " + why);
    BatchFile file;
    file.direction = put ? Direction::put : Direction::get;
    if (put) {
      file.local = source;
      file.remote = at_path(*url, url->trailing_slash ? join(url->path, last_component(source)) : url->path);
    } else {
      if (url->trailing_slash) throw Error(Errc::usage, where + ": " + source + " names a directory; name a file");
      file.remote = *url;
      const bool into = dest.ends_with('/') || is_local_directory(dest);
      file.local = into ? join(dest, last_component(url->path)) : dest;
    }
    plan.files.push_back(std::move(file));
  }
  if (plan.files.empty()) throw Error(Errc::usage, list_name + ": no 'SOURCE DEST' lines; nothing to transfer");
  return plan;
}

BatchPlan plan_from_list(const std::string& list_path) {
  std::ifstream in(list_path);
  if (!in) throw Error(Errc::not_found, "--from-file " + list_path + ": cannot read it; check the path");
  std::stringstream text;
  text << in.rdbuf();
  return parse_transfer_list(text.str(), list_path);
}

}  // namespace pxfer
