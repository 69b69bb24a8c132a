// Ctrl-C on the client: the transfer ends through its failure path and leaves nothing behind.
#include <gtest/gtest.h>

#include <csignal>
#include <thread>

#include "support/e2e.hpp"

namespace pxfer::e2e {
namespace {

TEST(Interrupt, SigintDuringAGetLeavesNoTemporaryFile) {
  TempDir dir{big_file_base()};
  std::string root = dir.subdir("root");
  std::string local = dir.subdir("local");
  make_file(root + "/big.dat", 1536u << 20, 4);
  ServerProcess server(root);
  auto client = start_pxfer({"get", "-p", "1", server.url("big.dat"), local + "/big.dat"});
  // Interrupt once data flows (the temporary file exists), before the transfer can finish.
  for (int i = 0; i < 500 && hidden_temporaries(local).empty(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  ASSERT_FALSE(hidden_temporaries(local).empty()) << "the get never started";
  client.send_signal(SIGINT);
  bool timed_out = false;
  int status = client.wait(std::chrono::seconds(20), &timed_out);
  EXPECT_FALSE(timed_out);
  if (status == 0) GTEST_SKIP() << "the transfer finished before the signal arrived";
  EXPECT_EQ(status, 8) << client.err();
  EXPECT_NE(client.err().find("interrupted by SIGINT"), std::string::npos) << client.err();
  EXPECT_EQ(list_dir(local), std::vector<std::string>{}) << "left behind in the destination directory";
}

}  // namespace
}  // namespace pxfer::e2e
