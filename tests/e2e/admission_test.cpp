// pxferd --max-active: never more transfers moving data than allowed; the others wait in line
// and then succeed.
#include <gtest/gtest.h>

#include <regex>
#include <thread>

#include "support/e2e.hpp"

namespace pxfer::e2e {
namespace {

TEST(Admission, MaxActiveTwoWithTenFilesAtOnce) {
  TempDir dir{big_file_base()};
  std::string root = dir.subdir("root");
  std::string tree = dir.subdir("tree");
  for (int i = 0; i < 10; ++i)
    make_file(tree + "/f" + std::to_string(i) + ".dat", 32u << 20, static_cast<std::uint64_t>(100 + i));
  ServerProcess server(root, "127.0.0.1:0", {"--max-active", "2", "-v"});  // -v: every admission is logged
  auto r = run_pxfer("put", "-r", "-c", "10", "-p", "2", tree, server.url("dest/"));
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  for (int i = 0; i < 10; ++i)
    EXPECT_TRUE(files_equal(tree + "/f" + std::to_string(i) + ".dat", root + "/dest/tree/f" + std::to_string(i) + ".dat"));

  std::string log = server.log();
  std::regex admitted(R"(admitted active=(\d+) max_active=2)");
  int admissions = 0, peak = 0;
  for (auto it = std::sregex_iterator(log.begin(), log.end(), admitted); it != std::sregex_iterator(); ++it) {
    ++admissions;
    peak = std::max(peak, std::stoi((*it)[1]));
  }
  EXPECT_EQ(admissions, 10) << log;
  EXPECT_LE(peak, 2) << log;
  EXPECT_GE(count_lines_containing(log, "queued position="), 1u) << "ten files at once, none waited?\n" << log;
  EXPECT_EQ(count_lines_containing(log, "result=ok"), 10u) << log;
}

TEST(Admission, QueuedClientSeesItsPosition) {
  TempDir dir{big_file_base()};
  std::string root = dir.subdir("root");
  make_file(root + "/big.dat", 768u << 20, 9);
  ServerProcess server(root, "127.0.0.1:0", {"--max-active", "1", "-v"});
  auto first = start_pxfer({"get", "-p", "1", server.url("big.dat"), dir / "one.dat"});
  // Give the first get time to be admitted before the second asks.
  for (int i = 0; i < 100 && count_lines_containing(server.log(), "admitted") == 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  auto second = run_pxfer("get", "-p", "1", server.url("big.dat"), dir / "two.dat");
  first.wait(std::chrono::seconds(60));
  ASSERT_EQ(second.exit_code, 0) << second.err;
  EXPECT_TRUE(files_equal(root + "/big.dat", dir / "two.dat"));
  if (count_lines_containing(server.log(), "queued position=1") == 0)
    GTEST_SKIP() << "the first get finished before the second arrived; nothing was queued (machine too fast)";
  EXPECT_NE(second.out.find("queued, position 1 (server: 1 active"), std::string::npos) << second.out;
}

TEST(Admission, BadQueueTimeoutIsAUsageError) {
  TempDir dir;
  // pxferd refuses a bad --queue-timeout before it binds anything.
  auto child = ChildProcess::piped({binary_path("pxferd"), "--root", dir.path(), "--listen", "127.0.0.1:0",
                                    "--queue-timeout", "whenever"});
  bool timed_out = false;
  int status = child.wait(std::chrono::seconds(10), &timed_out);
  EXPECT_FALSE(timed_out);
  EXPECT_EQ(status, 2);
  EXPECT_NE(child.err().find("--queue-timeout whenever"), std::string::npos) << child.err();
}

}  // namespace
}  // namespace pxfer::e2e
