// -p auto sizes a long path's streams by the SENDER's congestion control (issue 39): bbr keeps its
// rate under loss and needs fewer streams than reno or cubic. A put's sender is the client; a get's
// is the server, which names its data sockets' congestion control in OPEN_OK
// (cap_sender_congestion). Real pxfer and pxferd in a network namespace of the test's own, whose
// default congestion control the test sets (net.ipv4.tcp_congestion_control is per namespace).
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "support/e2e.hpp"

namespace pxfer::e2e {
namespace {

std::string choice_of(const RunResult& r) {
  for (const auto& line : split_lines(r.out)) {
    if (line.empty()) continue;
    auto e = nlohmann::json::parse(line);
    if (e.at("event") == "summary") return e.value("streams_auto", "");
  }
  return "";
}

bool set_default_congestion(const std::string& name) {
  std::ofstream out("/proc/sys/net/ipv4/tcp_congestion_control");
  out << name << '\n';
  out.close();
  std::ifstream in("/proc/sys/net/ipv4/tcp_congestion_control");
  std::string now;
  in >> now;
  return now == name;
}

TEST(AutoSender, AGetLearnsTheServersCongestionControlAndAPutUsesItsOwn) {
  if (std::string why = enter_private_network(); !why.empty()) GTEST_SKIP() << why;
  // Only this namespace's default changes; the machine's stays as it was.
  ASSERT_TRUE(set_default_congestion("bbr")) << "bbr must be available (modprobe tcp_bbr)";
  TestDirs dirs(big_file_base());
  ServerProcess server = dirs.serve();
  make_file(dirs.root + "/f.bin", 16 * MiB + 5, 3);
  make_file(dirs.local + "/up.bin", 16 * MiB + 7, 4);

  // The get sets no --congestion: its own sockets' default says nothing of the server's, so a
  // "bbr sender" here can only have come from OPEN_OK.
  auto got = run_pxfer("get", "--json", "--block-size", "1M", server.url("f.bin"), dirs.local + "/f.bin");
  ASSERT_EQ(got.exit_code, 0) << got.err << got.out << server.log();
  EXPECT_TRUE(files_equal(dirs.root + "/f.bin", dirs.local + "/f.bin"));
  EXPECT_NE(choice_of(got).find("bbr sender"), std::string::npos) << got.out;

  // --congestion reno sets both ends: the server's data sockets use reno, and OPEN_OK says so.
  auto reno = run_pxfer("get", "--json", "--congestion", "reno", "--block-size", "1M", server.url("f.bin"),
                        dirs.local + "/reno.bin");
  ASSERT_EQ(reno.exit_code, 0) << reno.err << reno.out << server.log();
  const std::string reno_choice = choice_of(reno);
  EXPECT_EQ(reno_choice.rfind("auto ", 0), 0u) << reno.out;
  EXPECT_EQ(reno_choice.find("sender"), std::string::npos) << reno.out;

  auto put = run_pxfer("put", "--json", "--block-size", "1M", dirs.local + "/up.bin", server.url("up.bin"));
  ASSERT_EQ(put.exit_code, 0) << put.err << put.out << server.log();
  EXPECT_TRUE(files_equal(dirs.local + "/up.bin", dirs.root + "/up.bin"));
  EXPECT_NE(choice_of(put).find("bbr sender"), std::string::npos) << put.out;
}

}  // namespace
}  // namespace pxfer::e2e
