#include "local_tree.hpp"

#include <filesystem>

#include "io/tree.hpp"

namespace pxfer {
namespace fs = std::filesystem;

namespace {
std::string without_trailing_slashes(std::string path) {
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  return path;
}
}  // namespace

std::string path_below(const std::string& root, const std::string& path) {
  const std::string r = without_trailing_slashes(root);
  const std::string p = without_trailing_slashes(path);
  if (p == r) return "";
  const std::string prefix = r == "/" ? r : r + "/";
  if (p.size() <= prefix.size() || p.compare(0, prefix.size(), prefix) != 0)
    throw Error(Errc::permission, path + ": refused: not below the target directory " + root);
  return p.substr(prefix.size());
}

std::set<std::string> make_local_tree(const BatchPlan& plan, std::vector<Error>& errors) {
  std::set<std::string> made;
  if (plan.local_root.empty()) {
    for (const auto& dir : plan.local_directories) {
      std::error_code ec;
      fs::create_directories(dir, ec);
      if (ec) errors.emplace_back(errc_from_errno(ec.value()), "cannot create directory " + dir + ": " + ec.message());
    }
    return made;
  }
  std::error_code ec;
  if (fs::create_directories(plan.local_root, ec)) made.insert(without_trailing_slashes(plan.local_root));  // as typed
  if (ec) {
    errors.emplace_back(errc_from_errno(ec.value()), "cannot create directory " + plan.local_root + ": " + ec.message());
    return made;
  }
  try {
    Directory root = Directory::open_beneath(plan.local_root);
    for (const auto& dir : plan.local_directories) {
      try {
        const std::string relative = path_below(plan.local_root, dir);
        if (!relative.empty() && make_directories(root, relative)) made.insert(without_trailing_slashes(dir));
      } catch (const Error& e) {
        errors.emplace_back(e.code(), "cannot create " + dir + " beneath " + plan.local_root + ": " + e.what() +
                                          (e.code() == Errc::permission ? " (get -r follows no symlink below its target)" : ""));
      }
    }
  } catch (const Error& e) {
    errors.push_back(e);
  }
  return made;
}

std::string target_name(const std::string& root, const std::string& local) {
  if (root.empty()) return local;
  std::string relative = path_below(root, local);
  if (relative.empty()) throw Error(Errc::usage, local + ": names the target directory itself, not a file in it");
  return relative;
}

Directory target_directory(const std::string& root) {
  return root.empty() ? Directory::current() : Directory::open_beneath(root);
}

LocalTarget local_target(const std::string& root, const std::string& local) {
  std::string relative = target_name(root, local);
  return LocalTarget{target_directory(root), std::move(relative)};
}

}  // namespace pxfer
