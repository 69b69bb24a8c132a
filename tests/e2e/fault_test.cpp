// Fault injection (issue 5): every fault ends in a byte-identical file or a clear error, never a
// corrupt or partial file under the final name. Connections go through a proxy the test owns
// (tests/fault_proxy), which cuts or stalls one of them and slows them all so the fault lands
// mid-transfer; servers and clients are killed with SIGKILL and the same command is run again.
#include <gtest/gtest.h>
#include <sys/mount.h>
#include <unistd.h>

#include <csignal>
#include <cstring>
#include <sys/stat.h>
#include <thread>

#include <nlohmann/json.hpp>

#include "fault_proxy.hpp"
#include "support/e2e.hpp"

namespace pxfer::e2e {
namespace {

using pxfer::testing::Fault;
using pxfer::testing::FaultProxy;
using namespace std::chrono_literals;

std::string via(const FaultProxy& proxy, const std::string& path) {
  return "pxfer://127.0.0.1:" + std::to_string(proxy.port()) + "/" + path;
}

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  for (std::size_t nl; (nl = text.find('\n', start)) != std::string::npos; start = nl + 1)
    if (nl > start) lines.push_back(text.substr(start, nl - start));
  return lines;
}

bool contains(const std::string& text, const std::string& needle) { return text.find(needle) != std::string::npos; }

// Waits until the client's rate lines pass `bytes`; false if it ended or 30 s went by first.
bool wait_for_bytes(ChildProcess& client, std::uint64_t bytes) {
  auto deadline = std::chrono::steady_clock::now() + 30s;
  while (std::chrono::steady_clock::now() < deadline && !client.try_wait()) {
    client.pump(10ms);
    for (auto b : rate_line_bytes(client.out()))
      if (b >= bytes) return true;
  }
  return false;
}

// Waits (pumping the client's output) until the journal of `name` in `dir` records `blocks`
// blocks; false if the client ended or 30 s went by first.
bool wait_for_journal(ChildProcess& client, const std::string& dir, const std::string& name, std::size_t blocks) {
  auto deadline = std::chrono::steady_clock::now() + 30s;
  while (std::chrono::steady_clock::now() < deadline && !client.try_wait()) {
    if (journaled_blocks(dir, name) >= blocks) return true;
    client.pump(10ms);
  }
  return false;
}

// The file's bytes as the proxy counted them on the connections accepted as `first` or later:
// towards the server for a put, towards the client for a get (block headers and control frames
// included: a few KiB per MiB).
std::uint64_t payload_since(FaultProxy& proxy, std::size_t first, bool put) {
  auto c = proxy.carried_since(first);
  return put ? c.to_server : c.to_client;
}

constexpr std::uint64_t block = 2 * MiB;  // pxfer's default --block-size

// Waits until the server's threads are all under strace (its "attached" lines); "" when it
// cannot trace (the reason otherwise).
std::string wait_for_strace(ChildProcess& strace) {
  auto deadline = std::chrono::steady_clock::now() + 10s;
  while (std::chrono::steady_clock::now() < deadline) {
    strace.pump(20ms);
    if (contains(strace.err(), "attached")) {
      std::this_thread::sleep_for(200ms);  // the other threads' lines follow the first
      return "";
    }
    if (strace.try_wait()) return "strace ended: " + strace.err();
  }
  return "strace did not attach within 10 s: " + strace.err();
}

// One data connection is cut, or stops moving anything, in the middle of a put or a get: its
// blocks go to the other streams, a new connection replaces it, the file arrives whole.
struct StreamFault {
  const char* direction;
  Fault fault;
  bool encrypt = false;  // the replacement stream is a new TLS channel with its own bound proof
};

class BrokenStream : public DirsTest, public ::testing::WithParamInterface<StreamFault> {};

TEST_P(BrokenStream, TransferCompletesByteIdentical) {
  const bool put = std::string(GetParam().direction) == "put";
  const Fault fault = GetParam().fault;
  std::string source = put ? local + "/f.bin" : root + "/f.bin";
  std::string dest = put ? root + "/f.bin" : local + "/f.bin";
  // 96 MiB at 8 MiB/s per connection: about 3 s with 4 streams, 4 s once one is lost. A stall is
  // seen 1-2 s after it starts (--stall-timeout 1s, checked each heartbeat), and the replacement
  // must attach before the last block is acknowledged, or there is no "reconnected after" to
  // read: with 48 MiB (1.5 s) that race was lost now and then on a busy machine.
  make_file(source, 96 * MiB, 501);
  ServerProcess server = serve();
  FaultProxy proxy(server.port());
  proxy.set_rate(8 * MiB);
  // Connection 0 is the control connection; 1 to 4 are the data streams.
  proxy.inject(2, fault, 3 * MiB);
  std::vector<std::string> args = put ? std::vector<std::string>{"put", source, via(proxy, "f.bin")}
                                      : std::vector<std::string>{"get", via(proxy, "f.bin"), dest};
  args.insert(args.end(), {"-p", "4", "--stall-timeout", "1s"});
  if (GetParam().encrypt) args.push_back("--encrypt");
  RunResult r = run_pxfer_args(args);
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_EQ(proxy.faults_fired(), 1u);
  EXPECT_TRUE(files_equal(source, dest));
  EXPECT_TRUE(contains(r.out, "data stream failures recovered")) << r.out;
  EXPECT_TRUE(contains(r.err, "reconnected after")) << r.err;
  if (fault == Fault::stall) {
    EXPECT_TRUE(contains(r.err, "stalled")) << r.err;
  }
  EXPECT_GT(proxy.accepted(), 5u) << "no replacement connection was opened";
  EXPECT_EQ(hidden_temporaries(put ? root : local), std::vector<std::string>{});
}

INSTANTIATE_TEST_SUITE_P(Faults, BrokenStream,
                         ::testing::Values(StreamFault{"put", Fault::cut}, StreamFault{"get", Fault::cut},
                                           StreamFault{"put", Fault::stall}, StreamFault{"get", Fault::stall},
                                           StreamFault{"put", Fault::cut, true}, StreamFault{"get", Fault::cut, true}),
                         [](const ::testing::TestParamInfo<StreamFault>& p) {
                           return std::string(p.param.direction) + (p.param.fault == Fault::cut ? "_cut" : "_stall") +
                                  (p.param.encrypt ? "_encrypted" : "");
                         });

// pxferd dies (SIGKILL) in the middle of a put or a get and is started again: the same command
// sends only what the receiver does not have yet, and the file is whole.
class ServerKilled : public DirsTest, public ::testing::WithParamInterface<const char*> {};

TEST_P(ServerKilled, RerunResumesWithFewerBytes) {
  const bool put = std::string(GetParam()) == "put";
  const std::uint64_t size = 64 * MiB;
  std::string source = put ? local + "/f.bin" : root + "/f.bin";
  std::string dest = put ? root + "/f.bin" : local + "/f.bin";
  std::string receiving_dir = put ? root : local;
  make_file(source, size, 502);
  auto server = std::make_unique<ServerProcess>(root);
  FaultProxy proxy(server->port());
  proxy.set_rate(10 * MiB);
  std::vector<std::string> args = put ? std::vector<std::string>{"put", source, via(proxy, "f.bin")}
                                      : std::vector<std::string>{"get", via(proxy, "f.bin"), dest};
  for (const char* a : {"-p", "2", "--perf-interval", "0.05"}) args.emplace_back(a);
  ChildProcess client = start_pxfer(args);
  ASSERT_TRUE(wait_for_bytes(client, 16 * MiB)) << client.out() << client.err();
  // The sender's byte count runs ahead of the receiver by what sits in socket buffers and the
  // proxy: wait until the receiver's journal really holds 4 blocks (8 MiB) before the kill.
  ASSERT_TRUE(wait_for_journal(client, receiving_dir, "f.bin", 4)) << client.out() << client.err();
  ::kill(server->pid(), SIGKILL);
  int status = client.wait(30s);
  EXPECT_EQ(status, 5) << client.err();  // network: the server went away
  const std::uint64_t first_run = payload_since(proxy, 0, put);
  const std::uint64_t had = journaled_blocks(receiving_dir, "f.bin") * block;
  ASSERT_GE(had, 4 * block);
  EXPECT_FALSE(path_exists(dest)) << "a partial file appeared under the final name";
  EXPECT_EQ(hidden_temporaries(receiving_dir), resumable_leftovers("f.bin"));
  server.reset();  // reaps the killed process

  ServerProcess restarted = serve();
  proxy.set_upstream(restarted.port());
  proxy.set_rate(0);
  std::vector<std::string> again_args(args.begin(), args.end() - 2);
  again_args.emplace_back("--json");
  const std::size_t rerun_first = proxy.accepted();
  RunResult again = run_pxfer_args(again_args);
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_TRUE(files_equal(source, dest));
  EXPECT_EQ(hidden_temporaries(receiving_dir), std::vector<std::string>{});
  // Measured by the proxy, not taken from the client: the rerun carried what the receiver's
  // journal lacked (plus framing), not the whole file, and the two runs together at least the file.
  const std::uint64_t rerun = payload_since(proxy, rerun_first, put);
  EXPECT_LE(rerun, size - had + 1 * MiB) << "journal held " << had << " bytes; the rerun carried " << rerun;
  EXPECT_GE(rerun, size - had);
  EXPECT_GE(first_run + rerun, size);
  nlohmann::json summary;
  for (const auto& line : split_lines(again.out)) {
    auto event = nlohmann::json::parse(line);
    if (event.at("event") == "summary") summary = event;
  }
  ASSERT_TRUE(summary.contains("resumed_bytes")) << again.out;
  auto resumed = summary.at("resumed_bytes").get<std::uint64_t>();
  EXPECT_GE(resumed, 8 * MiB) << "the rerun moved the whole file again: " << summary.dump();
  EXPECT_LT(resumed, size);
}

INSTANTIATE_TEST_SUITE_P(Faults, ServerKilled, ::testing::Values("put", "get"),
                         [](const ::testing::TestParamInfo<const char*>& p) { return std::string(p.param); });

// The client dies (SIGKILL) in the middle of a get: its journal survived, the rerun resumes.
using Faults = DirsTest;

TEST_F(Faults, ClientKilledDuringGetThenRerunResumes) {
  make_file(root + "/f.bin", 64 * MiB, 503);
  ServerProcess server = serve();
  FaultProxy proxy(server.port());
  proxy.set_rate(10 * MiB);
  ChildProcess client = start_pxfer({"get", via(proxy, "f.bin"), local + "/f.bin", "-p", "2", "--perf-interval", "0.05"});
  ASSERT_TRUE(wait_for_bytes(client, 16 * MiB)) << client.out() << client.err();
  ASSERT_TRUE(wait_for_journal(client, local, "f.bin", 2)) << client.out() << client.err();
  client.send_signal(SIGKILL);
  client.wait(10s);
  EXPECT_EQ(list_dir(local), resumable_leftovers("f.bin"));
  const std::uint64_t had = journaled_blocks(local, "f.bin") * block;
  proxy.set_rate(0);
  const std::size_t rerun_first = proxy.accepted();
  RunResult again = run_pxfer("get", via(proxy, "f.bin"), local + "/f.bin", "-p", "2");
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_TRUE(contains(again.out, "resumed: ")) << again.out;
  const std::uint64_t rerun = payload_since(proxy, rerun_first, false);
  EXPECT_LE(rerun, 64 * MiB - had + 1 * MiB) << "journal held " << had << " bytes; the rerun carried " << rerun;
  EXPECT_GE(rerun, 64 * MiB - had);
  EXPECT_TRUE(files_equal(root + "/f.bin", local + "/f.bin"));
  EXPECT_EQ(list_dir(local), std::vector<std::string>{"f.bin"});
}

// pxferd's read characters (/proc/PID/io rchar: read(2)/pread(2), not the mapped reads of a
// clear stream's blocks).
std::uint64_t read_chars(pid_t pid) {
  std::string io = read_text("/proc/" + std::to_string(pid) + "/io");
  auto at = io.find("rchar: ");
  return at == std::string::npos ? 0 : std::stoull(io.substr(at + 7));
}

// A resumed get of a file whose checksum pxferd has stored (docs/protocol.md "Stored checksums")
// reads only the blocks it sends: the blocks the client kept are not read again to checksum
// them. With --no-stored-checksums the server reads them (the whole-file checksum covers them).
TEST_F(Faults, AResumedGetOfAFileWithAStoredChecksumDoesNotReadTheKeptBlocksAgain) {
  for (bool stored : {true, false}) {
    SCOPED_TRACE(stored ? "stored checksums" : "--no-stored-checksums");
    TestDirs round;  // fresh directories and server each round
    make_file(round.root + "/f.bin", 64 * MiB, 505);
    std::this_thread::sleep_for(1200ms);  // quiet for over a second: SUM may record its value
    ServerProcess server = round.serve(stored ? std::vector<std::string>{} : std::vector<std::string>{"--no-stored-checksums"});
    ASSERT_EQ(run_pxfer("sum", server.url("f.bin")).exit_code, 0);
    FaultProxy proxy(server.port());
    proxy.set_rate(10 * MiB);
    ChildProcess client = start_pxfer({"get", via(proxy, "f.bin"), round.local + "/f.bin", "-p", "2", "--perf-interval", "0.05"});
    ASSERT_TRUE(wait_for_bytes(client, 16 * MiB)) << client.out() << client.err();
    ASSERT_TRUE(wait_for_journal(client, round.local, "f.bin", 4)) << client.out() << client.err();
    client.send_signal(SIGKILL);
    client.wait(10s);
    const std::uint64_t had = journaled_blocks(round.local, "f.bin") * block;
    proxy.set_rate(0);
    const std::uint64_t before = read_chars(server.pid());
    RunResult again = run_pxfer("get", via(proxy, "f.bin"), round.local + "/f.bin", "-p", "2");
    ASSERT_EQ(again.exit_code, 0) << again.err;
    EXPECT_TRUE(contains(again.out, "resumed: ")) << again.out;
    const std::uint64_t read = read_chars(server.pid()) - before;
    if (stored)
      EXPECT_LT(read, 1 * MiB) << "the client kept " << had << " bytes; pxferd read " << read;
    else
      EXPECT_GE(read, had) << "the whole-file checksum covers the kept blocks: read " << read;
    EXPECT_TRUE(files_equal(round.root + "/f.bin", round.local + "/f.bin"));
  }
}

// With --retries, one command rides out a server restart: it waits, reconnects and resumes.
TEST_F(Faults, RetriesCarryAPutThroughAServerRestart) {
  make_file(local + "/f.bin", 64 * MiB, 504);
  auto server = std::make_unique<ServerProcess>(root);
  FaultProxy proxy(server->port());
  proxy.set_rate(10 * MiB);
  ChildProcess client = start_pxfer({"put", local + "/f.bin", via(proxy, "f.bin"), "-p", "2", "--perf-interval", "0.05",
                                     "--retries", "5"});
  ASSERT_TRUE(wait_for_bytes(client, 16 * MiB)) << client.out() << client.err();
  ASSERT_TRUE(wait_for_journal(client, root, "f.bin", 2)) << client.out() << client.err();
  ::kill(server->pid(), SIGKILL);
  server.reset();
  const std::uint64_t had = journaled_blocks(root, "f.bin") * block;
  const std::size_t retry_first = proxy.accepted();
  ServerProcess restarted = serve();
  proxy.set_upstream(restarted.port());
  int status = client.wait(60s);
  ASSERT_EQ(status, 0) << client.err();
  EXPECT_TRUE(contains(client.err(), "retrying in")) << client.err();
  EXPECT_TRUE(contains(client.out(), "resumed: ")) << client.out();
  // The retry's connections (all accepted after the kill) carried only what the journal lacked.
  const std::uint64_t retry = payload_since(proxy, retry_first, true);
  EXPECT_LE(retry, 64 * MiB - had + 1 * MiB) << "journal held " << had << " bytes; the retry carried " << retry;
  EXPECT_TRUE(files_equal(local + "/f.bin", root + "/f.bin"));
  EXPECT_EQ(hidden_temporaries(root), std::vector<std::string>{});
}

// Every connection stops forwarding at once, the control connection too: data streams are
// replaced, the silent control connection is noticed (heartbeats), the attempt fails and
// --retries starts another that resumes. Nothing hangs.
class EverythingStalls : public DirsTest, public ::testing::WithParamInterface<const char*> {};

TEST_P(EverythingStalls, RetryResumesAndFinishes) {
  const bool put = std::string(GetParam()) == "put";
  std::string source = put ? local + "/f.bin" : root + "/f.bin";
  std::string dest = put ? root + "/f.bin" : local + "/f.bin";
  make_file(source, 48 * MiB, 508);
  ServerProcess server = serve();
  FaultProxy proxy(server.port());
  proxy.set_rate(10 * MiB);
  std::vector<std::string> args = put ? std::vector<std::string>{"put", source, via(proxy, "f.bin")}
                                      : std::vector<std::string>{"get", via(proxy, "f.bin"), dest};
  for (const char* a : {"-p", "2", "--perf-interval", "0.05", "--stall-timeout", "1s", "--retries", "3"}) args.emplace_back(a);
  ChildProcess client = start_pxfer(args);
  ASSERT_TRUE(wait_for_bytes(client, 8 * MiB)) << client.out() << client.err();
  // 8 journaled blocks (16 MiB) before the stall, so that the margin below (a block per stream)
  // still tells a resume from a second full copy.
  ASSERT_TRUE(wait_for_journal(client, put ? root : local, "f.bin", 8)) << client.out() << client.err();
  const std::size_t after_stall = proxy.accepted();
  proxy.inject_all(Fault::stall);
  const std::uint64_t had = journaled_blocks(put ? root : local, "f.bin") * block;
  bool timed_out = false;
  int status = client.wait(60s, &timed_out);
  ASSERT_FALSE(timed_out) << "the transfer hung: " << client.err();
  ASSERT_EQ(status, 0) << client.err();
  EXPECT_TRUE(contains(client.err(), "retrying in")) << client.err();
  EXPECT_TRUE(files_equal(source, dest));
  // It resumed: everything carried after the stall (replacement streams and the retry) is less
  // than the file by at least what the receiver had journaled when everything stopped, give or
  // take a block per stream: a replacement stream may carry a block whole that the retry, which
  // cut it before the receiver journaled it, carries again (seen 2-3 times in 14 runs under load,
  // with the previous release's binaries too, when the margin was 1 MiB).
  const std::uint64_t later = payload_since(proxy, after_stall, put);
  EXPECT_LE(later, 48 * MiB - had + 2 * block + 1 * MiB) << "journal held " << had << " bytes; after the stall " << later
                                             << " bytes were carried (the whole file is " << 48 * MiB << ")";
}

INSTANTIATE_TEST_SUITE_P(Faults, EverythingStalls, ::testing::Values("put", "get"),
                         [](const ::testing::TestParamInfo<const char*>& p) { return std::string(p.param); });

// The source shrinks while it is being sent: a clear integrity error, and nothing is kept at
// the receiver, not even hidden (those bytes must not be resumed).
TEST_F(Faults, SourceTruncatedDuringPutFailsCleanly) {
  make_file(local + "/f.bin", 64 * MiB, 505);
  ServerProcess server = serve();
  FaultProxy proxy(server.port());
  proxy.set_rate(10 * MiB);
  ChildProcess client = start_pxfer({"put", local + "/f.bin", via(proxy, "f.bin"), "-p", "2", "--perf-interval", "0.05"});
  ASSERT_TRUE(wait_for_bytes(client, 8 * MiB)) << client.out() << client.err();
  ASSERT_EQ(::truncate((local + "/f.bin").c_str(), 20 * MiB), 0);
  int status = client.wait(30s);
  EXPECT_EQ(status, 7) << client.err();  // integrity
  EXPECT_TRUE(contains(client.err(), "shrank") || contains(client.err(), "changed")) << client.err();
  // One line for the error (the proxy's address is new to known_hosts: one trust-on-first-use
  // warning may come before it).
  auto lines = split_lines(client.err());
  std::erase_if(lines, [](const std::string& l) { return contains(l, "warning: first connection"); });
  EXPECT_EQ(lines.size(), 1u) << client.err();
  EXPECT_FALSE(path_exists(root + "/f.bin"));
  for (int i = 0; i < 100 && !hidden_temporaries(root).empty(); ++i) std::this_thread::sleep_for(20ms);
  EXPECT_EQ(hidden_temporaries(root), std::vector<std::string>{});
}

// The same on the server's side of a get: pxferd sends from a mapping of the file
// (io/mapped_block.hpp), where a truncation would raise SIGBUS. The get fails with the integrity
// error and pxferd lives on to serve the next request.
TEST_F(Faults, SourceTruncatedDuringGetLeavesTheServerServing) {
  make_file(root + "/f.bin", 64 * MiB, 506);
  make_file(root + "/g.bin", 3 * MiB, 507);
  ServerProcess server = serve();
  FaultProxy proxy(server.port());
  proxy.set_rate(10 * MiB);
  ChildProcess client = start_pxfer({"get", via(proxy, "f.bin"), local + "/f.bin", "-p", "2", "--perf-interval", "0.05"});
  ASSERT_TRUE(wait_for_bytes(client, 8 * MiB)) << client.out() << client.err();
  ASSERT_EQ(::truncate((root + "/f.bin").c_str(), 20 * MiB), 0);
  int status = client.wait(30s);
  EXPECT_EQ(status, 7) << client.err();  // integrity
  EXPECT_TRUE(contains(client.err(), "shrank") || contains(client.err(), "changed")) << client.err();
  EXPECT_FALSE(path_exists(local + "/f.bin"));
  RunResult next = run_pxfer("get", server.url("g.bin"), local + "/g.bin");
  ASSERT_EQ(next.exit_code, 0) << next.err << server.log();
  EXPECT_TRUE(files_equal(root + "/g.bin", local + "/g.bin"));
}

// --sync (every block made durable before its ACK) and --no-resume (a partial file left by an
// earlier attempt is discarded, not resumed) both end in a whole file. The partial file is a real
// one, resumable (an interrupted put of the same source), so --no-resume is seen to matter: the
// proxy counts the whole file again. --sync is seen from outside: strace on pxferd counts the
// fdatasync calls on the file being received, one per block.
TEST_F(Faults, SyncAndNoResumeStillMoveTheWholeFile) {
  const std::uint64_t size = 24 * MiB;
  make_file(local + "/f.bin", size, 509);
  ServerProcess server = serve();
  FaultProxy proxy(server.port());
  proxy.set_rate(4 * MiB);
  ChildProcess first = start_pxfer({"put", local + "/f.bin", via(proxy, "f.bin"), "-p", "2"});
  ASSERT_TRUE(wait_for_journal(first, root, "f.bin", 2)) << first.out() << first.err();
  first.send_signal(SIGKILL);
  first.wait(10s);
  ASSERT_EQ(hidden_temporaries(root), resumable_leftovers("f.bin"));
  ASSERT_GE(journaled_blocks(root, "f.bin"), 2u);
  proxy.set_rate(0);

  if (::access("/usr/bin/strace", X_OK) != 0) GTEST_SKIP() << "strace not installed: --sync cannot be observed";
  std::string trace = dir / "strace.txt";
  ChildProcess strace = ChildProcess::piped(
      {"/usr/bin/strace", "-f", "-y", "-e", "trace=fdatasync,fsync", "-o", trace, "-p", std::to_string(server.pid())});
  ASSERT_EQ(wait_for_strace(strace), "") << "cannot observe --sync";

  const std::size_t rerun_first = proxy.accepted();
  RunResult r = run_pxfer("put", local + "/f.bin", via(proxy, "f.bin"), "-p", "3", "--sync", "--no-resume");
  strace.send_signal(SIGINT);  // detaches
  strace.wait(10s);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_FALSE(contains(r.out, "resumed: ")) << r.out;
  EXPECT_TRUE(files_equal(local + "/f.bin", root + "/f.bin"));
  EXPECT_EQ(list_dir(root), std::vector<std::string>{"f.bin"});
  EXPECT_GE(payload_since(proxy, rerun_first, true), size) << "--no-resume resumed the partial file";
  // One fdatasync per block on the file being received (its hidden name), the commit's on top.
  std::size_t syncs = 0;
  for (const auto& line : split_lines(read_text(trace)))
    if ((contains(line, "fdatasync(") || contains(line, "fsync(")) && contains(line, "/.f.bin.pxfer-") &&
        !contains(line, "journal"))
      ++syncs;
  EXPECT_GE(syncs, size / block) << read_text(trace);
}

// The destination file system is full (a small tmpfs this test mounts): a clear local I/O
// error before any data moves, nothing left behind, the server still serving.
TEST_F(Faults, DestinationFileSystemFull) {
  if (::geteuid() != 0) GTEST_SKIP() << "mounting a tmpfs needs root (CI runs as root)";
  std::string small = root + "/small";
  ASSERT_EQ(::mkdir(small.c_str(), 0755), 0);
  if (::mount("pxfer-test", small.c_str(), "tmpfs", 0, "size=8m") != 0)
    GTEST_SKIP() << "cannot mount a tmpfs here: " << std::strerror(errno);
  struct Unmount {
    std::string path;
    ~Unmount() { ::umount2(path.c_str(), MNT_DETACH); }
  } unmount{small};
  make_file(local + "/big.bin", 16 * MiB, 506);
  make_file(local + "/ok.bin", 1 * MiB, 507);
  ServerProcess server = serve();
  RunResult r = run_pxfer("put", local + "/big.bin", server.url("small/big.bin"), "-p", "2");
  EXPECT_EQ(r.exit_code, 8) << r.err;
  EXPECT_TRUE(contains(r.err, "No space left on device")) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_EQ(list_dir(small), std::vector<std::string>{});
  RunResult ok = run_pxfer("put", local + "/ok.bin", server.url("small/ok.bin"));
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_TRUE(files_equal(local + "/ok.bin", small + "/ok.bin"));
}

}  // namespace
}  // namespace pxfer::e2e
