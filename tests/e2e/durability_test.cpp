// Small files made durable in groups (io/commit_group.hpp, issue 12.3), seen from outside with
// strace on the receiving end, pxferd for a put -r and pxfer for a get -r: every file's data is
// flushed (fdatasync of its hidden temporary) before it takes its final name, its directory is
// fsynced before pxferd answers for it, and directories are fsynced once per group, not per file.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <thread>

#include "support/e2e.hpp"

namespace pxfer::e2e {
namespace {
namespace fs = std::filesystem;
using namespace std::chrono_literals;

constexpr int files_per_dir = 30;

void make_tree(const std::string& top) {
  for (int d = 0; d < 2; ++d)
    for (int i = 0; i < files_per_dir; ++i) {
      std::string sub = top + "/d" + std::to_string(d);
      fs::create_directories(sub);
      make_file(sub + "/f" + std::to_string(i), 3000 + static_cast<std::uint64_t>(i) * 977, static_cast<std::uint64_t>(70 + d * 100 + i));
    }
}

// The path strace -y prints for the descriptor argument that starts at `from` ("7</a/b>" → "/a/b").
std::string fd_path(const std::string& line, std::size_t from) {
  auto open = line.find('<', from), close = line.find('>', open);
  if (open == std::string::npos || close == std::string::npos) return "";
  return line.substr(open + 1, close - open - 1);
}
// The n-th quoted string of a line.
std::string quoted(const std::string& line, int n) {
  std::size_t at = 0;
  for (int i = 0;; ++i) {
    auto open = line.find('"', at), close = line.find('"', open + 1);
    if (open == std::string::npos || close == std::string::npos) return "";
    if (i == n) return line.substr(open + 1, close - open - 1);
    at = close + 1;
  }
}

struct Order {
  std::size_t placed = 0;        // temporaries renamed onto their final names below `below`
  std::size_t dir_syncs = 0;     // fsyncs of directories below `below`
  std::vector<std::string> broken;  // what went against the order
};

// Reads an `strace -f -y` trace of fdatasync, fsync, renameat2 and the socket sends. With
// `answers_wait`, nothing may be sent on a TCP connection while a file is renamed into a directory
// not yet fsynced (one control connection: its answers are what says "done").
Order check_order(const std::string& trace, const std::string& below, bool answers_wait) {
  Order o;
  std::set<std::string> flushed;
  std::set<std::string> unsynced_dirs;  // renamed into, directory not fsynced yet
  for (const auto& line : split_lines(read_text(trace))) {
    if (auto at = line.find("fdatasync("); at != std::string::npos) {
      flushed.insert(fd_path(line, at));
    } else if (auto rename_at = line.find("renameat2("); rename_at != std::string::npos) {
      const std::string dir = fd_path(line, rename_at), temp = quoted(line, 0);
      if (dir.rfind(below, 0) != 0 || temp.empty() || temp[0] != '.') continue;
      if (line.find("= 0") == std::string::npos && line.find("unfinished") == std::string::npos) continue;
      ++o.placed;
      if (!flushed.count(dir + "/" + temp)) o.broken.push_back("renamed before its data was flushed: " + line);
      unsynced_dirs.insert(dir);
    } else if (auto fsync_at = line.find("fsync("); fsync_at != std::string::npos) {
      const std::string dir = fd_path(line, fsync_at);
      if (dir.rfind(below, 0) == 0 && fs::is_directory(dir)) {
        ++o.dir_syncs;
        unsynced_dirs.erase(dir);
      }
    } else if (answers_wait && line.find("<TCP") != std::string::npos && !unsynced_dirs.empty()) {
      o.broken.push_back("sent on a connection before " + *unsynced_dirs.begin() + " was fsynced: " + line);
    }
  }
  if (!unsynced_dirs.empty()) o.broken.push_back("never fsynced: " + *unsynced_dirs.begin());
  return o;
}

std::vector<std::string> strace_argv(const std::string& trace) {
  return {"/usr/bin/strace", "-f", "-y", "-e", "trace=fdatasync,fsync,renameat2,sendto,sendmsg,write,writev", "-o", trace};
}

// Waits until strace reports it attached to every thread of the process.
bool attached(ChildProcess& strace) {
  auto deadline = std::chrono::steady_clock::now() + 10s;
  while (std::chrono::steady_clock::now() < deadline) {
    strace.pump(20ms);
    if (strace.err().find("attached") != std::string::npos) {
      std::this_thread::sleep_for(200ms);
      return true;
    }
    if (strace.try_wait()) return false;
  }
  return false;
}

using Durability = DirsTest;

TEST_F(Durability, SmallFilesAreFlushedBeforeTheirNameAndTheirDirectoryBeforeTheyCountAsDone) {
  if (::access("/usr/bin/strace", X_OK) != 0) GTEST_SKIP() << "strace not installed: the order cannot be observed";
  std::string back = dir.subdir("back");
  make_tree(local + "/tree");
  ServerProcess server = serve();

  // put -r: pxferd receives, on one control connection (-c 1), so that any answer it sends while
  // a renamed file's directory is not yet fsynced is an answer too early.
  const std::string put_trace = dir / "put.strace";
  auto argv = strace_argv(put_trace);
  argv.insert(argv.end(), {"-p", std::to_string(server.pid())});
  ChildProcess strace = ChildProcess::piped(argv);
  ASSERT_TRUE(attached(strace)) << strace.err();
  RunResult put = run_pxfer("put", "-q", "-r", "-c", "1", local + "/tree", server.url("tree"));
  strace.send_signal(SIGINT);  // detaches
  strace.wait(10s);
  ASSERT_EQ(put.exit_code, 0) << put.err;
  Order p = check_order(put_trace, root + "/tree", true);
  EXPECT_EQ(p.placed, 2u * files_per_dir) << read_text(put_trace);
  EXPECT_TRUE(p.broken.empty()) << p.broken.front();
  EXPECT_GE(p.dir_syncs, 2u);
  EXPECT_LT(p.dir_syncs, p.placed) << "a directory fsync per file: nothing was committed as a group";

  // get -r: pxfer receives (and reports each file once its group is committed).
  const std::string get_trace = dir / "get.strace";
  argv = strace_argv(get_trace);
  for (const auto& a : {std::string("-qq"), binary_path("pxfer"), std::string("get"), std::string("-q"), std::string("-r"),
                        std::string("-c"), std::string("4"), server.url("tree"), back + "/"})
    argv.push_back(a);
  ChildProcess get = ChildProcess::piped(argv);
  ASSERT_EQ(get.wait(120s), 0) << get.err();
  for (int d = 0; d < 2; ++d)
    for (int i = 0; i < files_per_dir; ++i) {
      std::string rel = "/tree/d" + std::to_string(d) + "/f" + std::to_string(i);
      EXPECT_TRUE(files_equal(local + rel, back + rel)) << rel;
    }
  Order g = check_order(get_trace, back + "/tree", false);
  EXPECT_EQ(g.placed, 2u * files_per_dir) << read_text(get_trace);
  EXPECT_TRUE(g.broken.empty()) << g.broken.front();
  EXPECT_GE(g.dir_syncs, 2u);
  EXPECT_LT(g.dir_syncs, g.placed) << "a directory fsync per file: nothing was committed as a group";
}

}  // namespace
}  // namespace pxfer::e2e
