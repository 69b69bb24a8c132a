#pragma once
// Where a get writes on the client. A get -r writes what a server listed: each name is checked
// (check_listing) and everything is created beneath the directory the user named, through its
// descriptor, never following a symbolic link, so a server can only write below that directory.
#include "pxfer/client/layer.hpp"
#include <set>
#include <string>
#include <vector>

#include "pxfer/client/batch.hpp"
#include "pxfer/common/error.hpp"
#include "io/file_io.hpp"

namespace pxfer {

// Creates plan.local_directories. With plan.local_root (get -r) the root is created as the user
// typed it and every directory below it one component at a time through descriptors
// (make_directories: mkdirat, O_NOFOLLOW, a symlink in the way is refused). Without it, as typed.
// Failures are appended to `errors`. Returns the get -r directories this call made (they did not
// exist before), as the plan names them without trailing slashes: a file in one of them has
// nothing under its name to check for before it is stored (SinkOptions::new_directory).
std::set<std::string> make_local_tree(const BatchPlan& plan, std::vector<Error>& errors);


// `path` relative to `root` ("" for root itself). Throws Error(permission) when it is not below.
std::string path_below(const std::string& root, const std::string& path);

// The directory a get opens its destination through, and the destination's name relative to it:
// Directory::open_beneath(root) when `root` is set (get -r), else the working directory.
struct LocalTarget {
  Directory dir;
  std::string path;
};
LocalTarget local_target(const std::string& root, const std::string& local);
// Its two halves, for a run of files that opens the directory once: the directory, and a file's
// name relative to it (throws Error(usage) for the root itself, Error(permission) outside it).
Directory target_directory(const std::string& root);
std::string target_name(const std::string& root, const std::string& local);

}  // namespace pxfer
