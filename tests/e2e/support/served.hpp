#pragma once
// The set-up most end-to-end tests share: a scratch directory with root/ (what pxferd exports)
// and local/ (the client's side), and a pxferd serving root/ on loopback. As a gtest fixture:
//   using Suite = ServedTest;     TEST_F(Suite, ...) { run_pxfer("put", local + "/f", server.url("f")); }
//   using Suite = DirsTest;       TEST_F(Suite, ...) { make_file(...); ServerProcess server = serve({"-v"}); }
// or as a plain object (Served s; s.url("f")) where a test needs its own fixture class.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "pxfer/common/url.hpp"
#include "support/process.hpp"
#include "support/temp_dir.hpp"

namespace pxfer::e2e {

// server.url(path) parsed, for the client library's calls; throws std::runtime_error if it is bad.
inline Url parsed_url(const ServerProcess& server, const std::string& path) {
  std::string why;
  auto parsed = parse_url(server.url(path), &why);
  if (!parsed) throw std::runtime_error("bad url " + server.url(path) + ": " + why);
  return *parsed;
}

// root/ and local/ in a scratch directory under `base` (big_file_base() for big or many files),
// for a test that starts pxferd itself: after putting files in place, with options, or twice.
class TestDirs {
 public:
  explicit TestDirs(const std::string& base = "/tmp") : dir(base), root(dir.subdir("root")), local(dir.subdir("local")) {}

  // A pxferd on root/ (see ServerProcess: --insecure-no-auth unless `extra_args` authenticate).
  // Returned by value: `ServerProcess server = serve({...});` constructs it in place.
  ServerProcess serve(const std::vector<std::string>& extra_args = {}, const std::string& listen = "127.0.0.1:0") const {
    return ServerProcess(root, listen, extra_args);
  }

  TempDir dir;
  const std::string root, local;
};

// The same with a pxferd serving root/ from the start (stopped before the directory goes).
class Served : public TestDirs {
 public:
  explicit Served(const std::vector<std::string>& extra_args = {}, const std::string& listen = "127.0.0.1:0",
                  const std::string& base = "/tmp")
      : TestDirs(base), server(root, listen, extra_args) {}

  // "pxfer://HOST:PORT/" + path
  std::string url(const std::string& path) const { return server.url(path); }

  ServerProcess server;
};

// gtest fixtures of the two: a suite uses one with `using Suite = ServedTest;` (or derives from
// it to add helpers, or to pass the constructor's arguments).
class DirsTest : public ::testing::Test, public TestDirs {
 protected:
  using TestDirs::TestDirs;
};
class ServedTest : public ::testing::Test, public Served {
 protected:
  using Served::Served;
};

}  // namespace pxfer::e2e
