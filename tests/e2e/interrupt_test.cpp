// Ctrl-C on the client: the transfer ends through its failure path; nothing appears under the
// final name and the rerun resumes.
#include <gtest/gtest.h>

#include <csignal>
#include <thread>

#include "support/e2e.hpp"

namespace pxfer::e2e {
namespace {

TEST(Interrupt, SigintDuringAGetKeepsOnlyAResumablePartialFile) {
  TempDir dir{big_file_base()};
  std::string root = dir.subdir("root");
  std::string local = dir.subdir("local");
  make_file(root + "/big.dat", 1536u << 20, 4);
  ServerProcess server(root);
  auto client = start_pxfer({"get", "-p", "1", server.url("big.dat"), local + "/big.dat"});
  // Interrupt once blocks are written (the journal holds a record past its 64-byte header),
  // before the transfer can finish.
  const std::string journal = local + "/.big.dat.pxfer-journal";
  for (int i = 0; i < 2500 && (!path_exists(journal) || file_size(journal) <= 64); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  ASSERT_TRUE(path_exists(journal) && file_size(journal) > 64) << "the get never started";
  client.send_signal(SIGINT);
  bool timed_out = false;
  int status = client.wait(std::chrono::seconds(20), &timed_out);
  EXPECT_FALSE(timed_out);
  if (status == 0) GTEST_SKIP() << "the transfer finished before the signal arrived";
  EXPECT_EQ(status, 10) << client.err();  // Errc::interrupted
  EXPECT_NE(client.err().find("interrupted by SIGINT"), std::string::npos) << client.err();
  // Nothing under the final name; the partial file stays hidden for a resume, and the same
  // command picks it up.
  EXPECT_EQ(list_dir(local), resumable_leftovers("big.dat")) << "left behind in the destination directory";
  RunResult again = run_pxfer("get", "-p", "1", server.url("big.dat"), local + "/big.dat");
  EXPECT_EQ(again.exit_code, 0) << again.err;
  EXPECT_NE(again.out.find("resumed: "), std::string::npos) << again.out;
  EXPECT_TRUE(files_equal(root + "/big.dat", local + "/big.dat"));
  EXPECT_EQ(list_dir(local), std::vector<std::string>{"big.dat"});
}

}  // namespace
}  // namespace pxfer::e2e
