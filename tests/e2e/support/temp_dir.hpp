#pragma once
// A scratch directory for one test, removed with everything below it when the test ends.
#include <string>

namespace pxfer::e2e {

// /dev/shm when it exists and is writable (big files are much faster there), else /tmp.
const std::string& big_file_base();

class TempDir {
 public:
  // mkdtemp(base/pxfer-e2e-XXXXXX); throws std::runtime_error when that fails.
  explicit TempDir(const std::string& base = "/tmp");
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  // path() + "/" + name
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }
  // Creates path()/name (and missing parents) and returns it.
  std::string subdir(const std::string& name) const;

 private:
  std::string path_;
};

}  // namespace pxfer::e2e
