// pxferd --log-file (issue 37 point 5): the log goes to the file; after logrotate moves it away,
// SIGUSR1 makes pxferd open a new file by the same name and write there.
#include <gtest/gtest.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <thread>

#include "support/e2e.hpp"

namespace pxfer::e2e {
namespace {

std::string text_of(const std::string& path) { return ::access(path.c_str(), F_OK) == 0 ? read_text(path) : ""; }

bool wait_for_text(const std::string& path, const std::string& needle) {
  auto deadline = std::chrono::steady_clock::now() + 15s;
  while (text_of(path).find(needle) == std::string::npos) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(20ms);
  }
  return true;
}

TEST(LogFile, WrittenMovedAwayAndReopenedOnSigusr1) {
  TempDir dir;
  const std::string log = dir.path() + "/pxferd.log", rotated = log + ".1";
  ChildProcess server = ChildProcess::piped({binary_path("pxferd"), "--root", dir.subdir("root"), "--listen",
                                             "127.0.0.1:0", "--insecure-no-auth", "--state-dir",
                                             dir.subdir("state"), "--log-file", log});
  ASSERT_TRUE(wait_for_text(log, "serving")) << text_of(log);
  ASSERT_EQ(std::rename(log.c_str(), rotated.c_str()), 0);
  server.send_signal(SIGUSR1);
  ASSERT_TRUE(wait_for_text(log, "log file reopened")) << "no new " << log;
  server.send_signal(SIGHUP);  // a reload's lines go to the new file too
  ASSERT_TRUE(wait_for_text(log, "SIGHUP: reloading")) << text_of(log);
  EXPECT_NE(text_of(rotated).find("serving"), std::string::npos);
  EXPECT_EQ(text_of(rotated).find("SIGHUP"), std::string::npos) << text_of(rotated);
  server.send_signal(SIGTERM);
  EXPECT_EQ(server.wait(10s), 0) << server.err();
  EXPECT_EQ(server.err(), "") << "with --log-file nothing goes to stderr";
  EXPECT_NE(text_of(log).find("pxferd stopped"), std::string::npos) << text_of(log);
}

TEST(LogFile, AnUnwritableLogFileStopsPxferdInOneLine) {
  TempDir dir;
  write_text(dir.path() + "/plain", "a file, not a directory\n");  // spdlog would create a missing directory
  RunResult r;
  auto child = ChildProcess::piped({binary_path("pxferd"), "--root", dir.subdir("root"), "--insecure-no-auth",
                                    "--log-file", dir.path() + "/plain/pxferd.log"});
  r.exit_code = child.wait(10s);
  EXPECT_EQ(r.exit_code, 2) << child.err();
  EXPECT_NE(child.err().find("--log-file"), std::string::npos) << child.err();
}

}  // namespace
}  // namespace pxfer::e2e
