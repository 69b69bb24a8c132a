// Issue 34, log forging: every class of character a terminal or a log reader acts on (C0, raw CR,
// ESC sequences, DEL, C1 as UTF-8 and as raw bytes, U+2028/U+2029, bidi controls, bytes that are
// not UTF-8) sent through every request type a client can aim at pxferd (MKDIR, STAT, LIST, SUM,
// RM, MV, PUT, GET, refusals, a third-party copy) and through a hostile server's listing. Neither
// pxferd's log nor the client's output may hold one raw, nor a second line the client wrote.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "pxfer/common/log_safe.hpp"
#include "support/e2e.hpp"
#include "support/hostile_server.hpp"

namespace pxfer::e2e {
namespace {

struct CharClass {
  const char* name;
  std::string bytes;
};

const std::vector<CharClass>& char_classes() {
  static const std::vector<CharClass> classes = {
      {"LF", "\n"},           {"CR", "\r"},
      {"ESC", "\x1b[2J\x1b]0;t\x07"}, {"C0", "\x01\x1f"},
      {"DEL", "\x7f"},        {"NEL", "\xc2\x85"},
      {"CSI", "\xc2\x9b"},    {"raw9B", "\x9b"},
      {"raw85", "\x85"},      {"LS", "\xe2\x80\xa8"},
      {"PS", "\xe2\x80\xa9"}, {"RLO", "\xe2\x80\xae"},
      {"LRE", "\xe2\x80\xaa"}, {"RLI", "\xe2\x81\xa7"},
      {"PDI", "\xe2\x81\xa9"}, {"LRM", "\xe2\x80\x8e"},
      {"RLM", "\xe2\x80\x8f"}, {"ALM", "\xd8\x9c"},
      {"invalid", "\xff\xc0\xaf"},
  };
  return classes;
}

// A name holding every class, each followed by what a forger wants at the start of a line (short:
// the whole name stays under NAME_MAX).
const std::string marker = "FORGED";
std::string hostile_name(const std::string& prefix) {
  std::string s = prefix;
  for (const auto& c : char_classes()) s += c.bytes + marker;
  return s;
}

// Which classes `text` holds raw; and whether a line of it begins with the forger's marker.
std::string raw_classes_in(const std::string& text) {
  std::string found;
  std::size_t start = 0;
  while (start <= text.size()) {
    auto end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(start, end - start);
    if (line.starts_with(marker)) found += "[a line begins with the forger's text: " + log_safe(line) + "] ";
    if (has_control_characters(line)) found += "[raw: " + log_safe(line) + "] ";
    start = end + 1;
  }
  return found;
}

void expect_clean(const std::string& what, const std::string& text) {
  EXPECT_EQ(raw_classes_in(text), "") << what;
}

void expect_clean(const std::string& what, const RunResult& r) {
  EXPECT_FALSE(r.timed_out) << what;
  expect_clean(what + " stdout", r.out);
  expect_clean(what + " stderr", r.err);
}

TEST(LogForging, EveryClassThroughEveryRequestTypeReachesTheLogAndTheTerminalEscaped) {
  TempDir dir;
  const std::string root = dir.subdir("root"), etc = dir.subdir("etc"), local = dir.subdir("local"),
                    root_b = dir.subdir("b");
  const std::string tokens = etc + "/tokens";
  write_private(etc + "/reader.token", create_token("reader", tokens) + "\n");
  write_private(etc + "/writer.token", create_token("writer", tokens) + "\n");
  write_private(etc + "/access", "reader / ro\nwriter / rw\nanonymous / rw\n");
  ServerProcess server(root, "127.0.0.1:0",
                       {"--tokens", tokens, "--access", etc + "/access", "--anonymous-read", "--verbose"});
  ServerProcess b(root_b, "127.0.0.1:0", {"--insecure-no-auth", "--tpc-allow", "127.0.0.1:*", "--verbose"});
  const std::string w = etc + "/writer.token", r = etc + "/reader.token";
  make_file(local + "/f.bin", 70 * KiB, 3);
  make_file(local + "/big.bin", 3 * MiB, 4);
  const std::string d = hostile_name("d"), f = hostile_name("f"), g = hostile_name("g");
  std::vector<std::pair<std::string, RunResult>> runs;
  auto run = [&](const std::string& what, std::vector<std::string> args) {
    runs.emplace_back(what, run_pxfer_args(args, 30s));
  };
  run("mkdir", {"mkdir", server.url(d), "--token-file", w});
  run("put", {"put", local + "/big.bin", server.url(d + "/" + f), "--token-file", w});
  run("put small", {"put", local + "/f.bin", server.url(d + "/" + g), "--token-file", w});
  run("stat", {"stat", server.url(d + "/" + f), "--token-file", w});
  run("ls", {"ls", "-l", server.url(d + "/"), "--token-file", w});
  run("sum", {"sum", server.url(d + "/" + f), "--token-file", w});
  run("get", {"get", server.url(d + "/" + f), local + "/got.bin", "--token-file", w});
  run("get -r", {"get", "-r", server.url(d + "/"), local + "/tree", "--token-file", w});
  run("cp (third-party)", {"cp", server.url(d + "/" + f), b.url(f)});
  run("mv", {"mv", server.url(d + "/" + f), server.url(d + "/" + f + "2"), "--token-file", w});
  run("refused mkdir", {"mkdir", server.url(hostile_name("r")), "--token-file", r});
  run("refused put", {"put", local + "/f.bin", server.url(hostile_name("r")), "--token-file", r});
  run("refused rm", {"rm", server.url(d + "/" + g), "--token-file", r});
  run("stat missing", {"stat", server.url(hostile_name("m")), "--token-file", w});
  run("rm", {"rm", "-r", server.url(d), "--token-file", w});
  for (const auto& [what, result] : runs) expect_clean(what, result);
  // The requests did reach the server: the log names them (escaped).
  const std::string log = server.log();
  EXPECT_NE(log.find("refused"), std::string::npos) << log;
  EXPECT_NE(log.find("removed"), std::string::npos) << log;
  EXPECT_NE(log.find("\\u202e"), std::string::npos) << log;
  expect_clean("pxferd's log", log);
  expect_clean("the copy's destination pxferd's log", b.log());
}

TEST(LogForging, AHostileListingsNamesReachTheTerminalEscaped) {
  TempDir dir;
  std::vector<wire::ListEntry> listing = {listed_directory("ok")};
  for (const auto& c : char_classes()) listing.push_back(listed_file("ok/" + c.bytes + marker + c.name));
  HostileServer server(dir.subdir("state"), listing);
  const std::string pin = server.fingerprint();
  RunResult ls = run_pxfer("ls", "-l", server.url("src/"), "--fingerprint", pin);
  expect_clean("ls", ls);
  RunResult get = run_pxfer("get", "-r", server.url("src/"), dir / "target", "--fingerprint", pin);
  expect_clean("get -r", get);
  // Without the names that get -r refuses outright (C0, DEL), every name reaches the output.
  std::vector<wire::ListEntry> printable = {listed_directory("ok")};
  for (const auto& c : char_classes())
    if (static_cast<unsigned char>(c.bytes[0]) >= 0x80) printable.push_back(listed_file("ok/" + c.bytes + marker + c.name));
  HostileServer names(dir.subdir("state2"), printable);
  RunResult get2 = run_pxfer("get", "-r", names.url("src/"), dir / "target2", "--fingerprint", names.fingerprint());
  expect_clean("get -r (names kept)", get2);
  EXPECT_NE(get2.err.find("\\u202e" + marker), std::string::npos) << get2.err;
}

}  // namespace
}  // namespace pxfer::e2e
