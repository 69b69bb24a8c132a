// Many small files (issue 12.3): a file of at most limits::max_small_file bytes moves whole in one
// frame on the control connection (PUT_SMALL / GET_SMALL), many in flight, and keeps every rule of
// an ordinary transfer: byte-identical copies both ways, an existing destination never clobbered
// and failing only its own file, the access rules and the export root, admission, and a client
// that writes nothing a server's digest does not vouch for.
#include <gtest/gtest.h>

#include <filesystem>
#include <cstdio>
#include <map>
#include <regex>
#include <thread>

#include "pxfer/client/client.hpp"
#include "pxfer/core/limits.hpp"
#include "pxfer/common/url.hpp"
#include "support/e2e.hpp"
#include "support/hostile_server.hpp"

namespace pxfer::e2e {
namespace {
namespace fs = std::filesystem;

constexpr int exit_permission = 4, exit_integrity = 7, exit_exists = 9;

// `count` files below `top` in four directories, sizes spread over 0..max_small_file (both ends
// included), and one file of three blocks that must take the ordinary path.
void make_mixed_tree(const std::string& top, int count) {
  for (int i = 0; i < count; ++i) {
    std::string sub = top + "/d" + std::to_string(i % 4);
    fs::create_directories(sub);
    std::uint64_t size = i == 0 ? 0 : i == 1 ? limits::max_small_file : (static_cast<std::uint64_t>(i) * 104729) % (300 * KiB);
    make_file(sub + "/f" + std::to_string(i), size, static_cast<std::uint64_t>(900 + i));
  }
  make_file(top + "/large.bin", 3 * MiB + 11, 77);
}

std::map<std::string, std::uint64_t> files_below(const std::string& dir) {
  std::map<std::string, std::uint64_t> out;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file()) out[fs::relative(e.path(), dir).string()] = e.file_size();
  return out;
}

void expect_same_files(const std::string& expected, const std::string& actual) {
  auto want = files_below(expected);
  ASSERT_EQ(want, files_below(actual)) << expected << " vs " << actual;
  for (const auto& [rel, size] : want) EXPECT_TRUE(files_equal(expected + "/" + rel, actual + "/" + rel)) << rel;
}

// pxferd's accounting lines of one direction that moved without data streams, and with them.
std::pair<std::size_t, std::size_t> small_and_streamed(const std::string& log, const std::string& direction) {
  std::size_t small = 0, streamed = 0;
  std::istringstream lines(log);
  for (std::string line; std::getline(lines, line);) {
    if (line.find("direction=" + direction) == std::string::npos || line.find("result=ok") == std::string::npos) continue;
    (line.find(" streams=0 ") != std::string::npos ? small : streamed) += 1;
  }
  return {small, streamed};
}

using SmallFiles = DirsTest;

TEST_F(SmallFiles, ATreeOfSmallFilesAndALargeOneMovesBothWaysByteForByte) {
  constexpr int count = 150;
  make_mixed_tree(local + "/tree", count);
  ServerProcess server = serve();
  RunResult put = run_pxfer("put", "-r", "-c", "4", local + "/tree", server.url("tree"));
  ASSERT_EQ(put.exit_code, 0) << put.err << put.out;
  expect_same_files(local + "/tree", root + "/tree");
  EXPECT_NE(put.out.find(std::to_string(count + 1) + " files: " + std::to_string(count + 1) + " done"), std::string::npos)
      << put.out;
  auto [small_puts, streamed_puts] = small_and_streamed(server.log(), "put");
  EXPECT_EQ(small_puts, static_cast<std::size_t>(count)) << "every small file in one frame";
  EXPECT_EQ(streamed_puts, 1u) << "the large file on its data streams";

  RunResult get = run_pxfer("get", "-r", "-c", "4", "--checksum", "sha256", server.url("tree"), local + "/back");
  ASSERT_EQ(get.exit_code, 0) << get.err << get.out;
  expect_same_files(local + "/tree", local + "/back");
  auto [small_gets, streamed_gets] = small_and_streamed(server.log(), "get");
  EXPECT_EQ(small_gets, static_cast<std::size_t>(count));
  EXPECT_EQ(streamed_gets, 1u);
  for (const auto& [name, size] : files_below(root))
    EXPECT_EQ(name.find(".pxfer-"), std::string::npos) << "a temporary was left behind: " << name;
}

TEST_F(SmallFiles, AnExistingDestinationFailsOnlyItsOwnFileAndIsNeverClobbered) {
  make_mixed_tree(local + "/tree", 12);
  ServerProcess server = serve();
  fs::create_directories(root + "/tree/d3");
  make_file(root + "/tree/d3/f3", 10, 1234);  // the server's copy, other bytes
  RunResult put = run_pxfer("put", "-r", local + "/tree", server.url("tree"));
  EXPECT_EQ(put.exit_code, exit_exists) << put.err;
  EXPECT_NE(put.err.find("f3"), std::string::npos) << put.err;
  EXPECT_NE(put.err.find("12 done, 0 skipped, 1 failed"), std::string::npos) << put.err << put.out;
  EXPECT_EQ(fs::file_size(root + "/tree/d3/f3"), 10u) << "clobbered without --overwrite";
  EXPECT_TRUE(files_equal(local + "/tree/d2/f2", root + "/tree/d2/f2"));

  ASSERT_EQ(run_pxfer("put", "-r", "--overwrite", local + "/tree", server.url("tree")).exit_code, 0);
  expect_same_files(local + "/tree", root + "/tree");

  fs::create_directories(local + "/back/d1");
  make_file(local + "/back/d1/f5", 7, 4321);
  RunResult get = run_pxfer("get", "-r", server.url("tree"), local + "/back");
  EXPECT_EQ(get.exit_code, exit_exists) << get.err;
  EXPECT_EQ(fs::file_size(local + "/back/d1/f5"), 7u) << "clobbered without --overwrite";
  EXPECT_TRUE(files_equal(local + "/tree/d0/f4", local + "/back/d0/f4"));
}

TEST_F(SmallFiles, AReadOnlyIdentityWritesNothing) {
  std::string etc = dir.subdir("etc");
  std::string token_file = etc + "/reader.token";
  write_private(token_file, create_token("reader", etc + "/tokens") + "\n");
  write_private(etc + "/access", "reader / ro\n");
  fs::create_directories(root + "/tree");  // MKDIR of an existing directory is not the question here
  for (int i = 0; i < 4; ++i) fs::create_directories(root + "/tree/d" + std::to_string(i));
  ServerProcess server = serve({"--tokens", etc + "/tokens", "--access", etc + "/access"});
  make_mixed_tree(local + "/tree", 8);
  RunResult put = run_pxfer("put", "-r", "--token-file", token_file, local + "/tree", server.url("tree"));
  EXPECT_EQ(put.exit_code, exit_permission) << put.err;
  EXPECT_TRUE(files_below(root).empty()) << "a read-only identity wrote a file";
}

// Requests a client has in flight and pxferd has read are served together (one admission slot,
// one trip to the blocking pool, one write of the answers): a refusal, an existing destination
// and the files around them each get their own answer, in place, and the batches are visible in
// the metrics.
TEST_F(SmallFiles, RequestsReadTogetherAreServedInOneBatchWithEachAnswerInItsPlace) {
  if (std::system("command -v curl >/dev/null 2>&1") != 0) GTEST_SKIP() << "curl not installed";
  std::string etc = dir.subdir("etc");
  const std::string token = create_token("writer", etc + "/tokens");
  write_private(etc + "/access", "writer / rw\nwriter frozen ro\n");
  fs::create_directories(root + "/ok");
  fs::create_directories(root + "/frozen");
  make_file(root + "/ok/f13", 10, 1234);  // the server's own, never clobbered
  ServerProcess server = serve({"--tokens", etc + "/tokens", "--access", etc + "/access", "--metrics-listen", "127.0.0.1:0"});
  pin_server(server.authority(), server.fingerprint());
  std::vector<SmallFile> files;
  for (int i = 0; i < 60; ++i) {
    std::string name = "f" + std::to_string(i);
    make_file(local + "/" + name, 20 * KiB + static_cast<std::uint64_t>(i), static_cast<std::uint64_t>(40 + i));
    Url remote = parsed_url(server, "x");
    remote.path = (i % 7 == 3 ? "frozen/" : "ok/") + name;
    files.push_back(SmallFile{Direction::put, local + "/" + name, remote});
  }
  ClientOptions options;
  ClientSecurity writer;
  writer.token = token;
  ClientSession session(options, writer);
  std::vector<SmallOutcome> outcomes(files.size());
  session.move_small(files, options, [&](std::size_t i, SmallOutcome o) { outcomes[i] = std::move(o); });
  for (int i = 0; i < 60; ++i) {
    const std::string name = "f" + std::to_string(i);
    if (i % 7 == 3) {
      ASSERT_TRUE(outcomes[i].error.has_value()) << name;
      EXPECT_EQ(outcomes[i].error->code(), Errc::permission) << outcomes[i].error->what();
      EXPECT_FALSE(path_exists(root + "/frozen/" + name));
    } else if (i == 13) {
      ASSERT_TRUE(outcomes[i].error.has_value()) << name;
      EXPECT_EQ(outcomes[i].error->code(), Errc::exists) << outcomes[i].error->what();
      EXPECT_EQ(fs::file_size(root + "/ok/f13"), 10u) << "clobbered without --overwrite";
    } else {
      EXPECT_EQ(outcomes[i].kind, SmallOutcome::Kind::done) << name << ": " << (outcomes[i].error ? outcomes[i].error->what() : "");
      EXPECT_TRUE(files_equal(local + "/" + name, root + "/ok/" + name)) << name;
    }
  }
  std::smatch m;
  std::string log = server.log();
  ASSERT_TRUE(std::regex_search(log, m, std::regex("metrics on http://(127\\.0\\.0\\.1:[0-9]+)/metrics"))) << log;
  std::string scrape = "\n" + capture_shell("curl -sf http://" + m[1].str() + "/metrics");
  const long long served = metric_sample(scrape, "pxferd_small_files_total");
  const long long batches = metric_sample(scrape, "pxferd_small_file_batches_total");
  EXPECT_EQ(served, 60) << scrape;
  EXPECT_GE(batches, 1) << scrape;
  EXPECT_LT(batches, served) << "every request was served alone: nothing was read together";
  EXPECT_EQ(metric_sample(scrape, "pxferd_small_file_channels_total"), 1) << "the session's bytes did not use a channel";
}

// The export root confines a small put as it confines OPEN: the request is refused by the server,
// nothing appears outside it. Sent through the library, which does not refuse the name itself.
TEST_F(SmallFiles, APathOutsideTheExportRootIsRefused) {
  ServerProcess server = serve();
  pin_server(server.authority(), server.fingerprint());
  make_file(local + "/x.dat", 1000, 5);
  std::vector<SmallFile> files;
  for (const std::string path : {"../escape.dat", "/abs.dat", "ok/../../up.dat"}) {
    Url remote = parsed_url(server, "x");
    remote.path = path;
    files.push_back(SmallFile{Direction::put, local + "/x.dat", remote});
  }
  ClientOptions options;
  ClientSession session(options);
  std::vector<SmallOutcome> outcomes(files.size());
  session.move_small(files, options, [&](std::size_t i, SmallOutcome o) { outcomes[i] = std::move(o); });
  for (std::size_t i = 0; i < files.size(); ++i) {
    EXPECT_EQ(outcomes[i].kind, SmallOutcome::Kind::failed) << files[i].remote.path;
    ASSERT_TRUE(outcomes[i].error.has_value()) << files[i].remote.path;
    EXPECT_EQ(outcomes[i].error->code(), Errc::permission) << outcomes[i].error->what();
  }
  EXPECT_FALSE(path_exists(dir.path() + "/escape.dat"));
  EXPECT_FALSE(path_exists("/abs.dat"));
  EXPECT_TRUE(files_below(root).empty());
}

// A session's kept control connection that the server closed (--idle-timeout 1s) is replaced at the
// next run of small files, without failing any of them.
TEST_F(SmallFiles, AKeptConnectionTheServerClosedIsReplaced) {
  ServerProcess server = serve({"--idle-timeout", "1s"});
  pin_server(server.authority(), server.fingerprint());
  auto files_named = [&](const std::string& prefix) {
    std::vector<SmallFile> files;
    for (int i = 0; i < 3; ++i) {
      std::string name = prefix + std::to_string(i);
      make_file(local + "/" + name, 1000 + static_cast<std::uint64_t>(i), static_cast<std::uint64_t>(i));
      files.push_back(SmallFile{Direction::put, local + "/" + name, parsed_url(server, name)});
    }
    return files;
  };
  ClientOptions options;
  ClientSession session(options);
  for (const std::string prefix : {"a", "b"}) {
    auto files = files_named(prefix);
    std::size_t done = 0;
    session.move_small(files, options, [&](std::size_t i, SmallOutcome o) {
      EXPECT_EQ(o.kind, SmallOutcome::Kind::done) << files[i].local << ": " << (o.error ? o.error->what() : "");
      done += o.kind == SmallOutcome::Kind::done;
    });
    EXPECT_EQ(done, 3u) << prefix;
    if (prefix == "a") std::this_thread::sleep_for(std::chrono::milliseconds(2500));
  }
  EXPECT_GE(count_lines_containing(server.log(), "control session closed"), 1u) << server.log();
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(files_equal(local + "/b" + std::to_string(i), root + "/b" + std::to_string(i)));
}

// A file over limits::max_small_file (one that grew after the listing, or a put's source) is not
// moved by the fast path: it comes back as a fallback for OPEN, and nothing is written.
TEST_F(SmallFiles, AFileOverTheLimitComesBackForTheOrdinaryPath) {
  ServerProcess server = serve();
  pin_server(server.authority(), server.fingerprint());
  make_file(root + "/grown.bin", limits::max_small_file + 1, 7);
  make_file(local + "/big.bin", limits::max_small_file + 1, 8);
  std::vector<SmallFile> files{SmallFile{Direction::get, local + "/grown.bin", parsed_url(server, "grown.bin")},
                               SmallFile{Direction::put, local + "/big.bin", parsed_url(server, "big.bin")}};
  ClientOptions options;
  ClientSession session(options);
  std::vector<SmallOutcome::Kind> kinds(files.size(), SmallOutcome::Kind::done);
  session.move_small(files, options, [&](std::size_t i, SmallOutcome o) { kinds[i] = o.kind; });
  EXPECT_EQ(kinds[0], SmallOutcome::Kind::fallback);
  EXPECT_EQ(kinds[1], SmallOutcome::Kind::fallback);
  EXPECT_FALSE(path_exists(local + "/grown.bin"));
  EXPECT_FALSE(path_exists(root + "/big.bin"));
}

// Admission still applies (one slot for the whole server) and the pipelines sharing it all end.
TEST_F(SmallFiles, OneAdmissionSlotForSeveralPipelinesStillMovesEveryFile) {
  make_mixed_tree(local + "/tree", 80);
  ServerProcess server = serve({"--max-active", "1"});
  RunResult put = run_pxfer("put", "-r", "-c", "4", local + "/tree", server.url("tree"));
  ASSERT_EQ(put.exit_code, 0) << put.err;
  expect_same_files(local + "/tree", root + "/tree");
}

// A server whose bytes do not match the digest it sent has nothing written: the client checks
// every small file before its temporary is renamed (and its retry the ordinary way is refused by
// this server, which answers nothing else).
TEST(SmallFilesHostile, BytesThatDoNotMatchTheServersDigestAreNeverWritten) {
  TempDir dir;
  std::string work = dir.subdir("work");
  HostileServer server(dir.subdir("state"), {listed_directory("ok"), listed_file("ok/f.txt", 5)});
  server.answer_small_gets({'E', 'V', 'I', 'L', '!'}, "00000001");
  RunResult r = run_pxfer("get", "-r", server.url("src/"), work + "/target", "--fingerprint", server.fingerprint(),
                          "--retries", "0");
  EXPECT_NE(r.exit_code, 0) << r.err;
  EXPECT_TRUE(r.exit_code == exit_integrity || r.exit_code == exit_permission) << r.exit_code << " " << r.err;
  EXPECT_FALSE(path_exists(work + "/target/ok/f.txt"));
  for (const auto& [name, size] : files_below(work)) EXPECT_EQ(name.find(".pxfer-"), std::string::npos) << name;
}

}  // namespace
}  // namespace pxfer::e2e
