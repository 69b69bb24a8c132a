// Nothing left behind, nothing refused twice (issue 16 points 2 to 6, issue 11 point 6): a claimed
// size is checked before anything is allocated, the resume journal's space is reserved with the
// data file, every stale temporary name is swept, a lost RESULT after the commit is not a failure,
// a rerun takes over the transfer of a client that died without closing its connections, and a
// destination directory removed during a put is noticed at the next block.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <sched.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <thread>

#include "fault_proxy.hpp"
#include "support/e2e.hpp"
#include "support/progress.hpp"

namespace pxfer::e2e {
namespace {

using pxfer::testing::Fault;
using pxfer::testing::FaultProxy;
using namespace std::chrono_literals;
using SteadyClock = std::chrono::steady_clock;


template <class Done>
bool poll_until(std::chrono::milliseconds limit, Done done) {
  auto deadline = SteadyClock::now() + limit;
  while (SteadyClock::now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(50ms);
  }
  return done();
}

// Mounts in a mount namespace of this test process's own, so nothing leaks to the host; pxferd
// and pxfer started afterwards inherit it. "" or why it cannot.
std::string private_mounts() {
  static std::string why = [] {
    if (::geteuid() != 0) return std::string("mounting a tmpfs needs root (CI runs as root)");
    if (::unshare(CLONE_NEWNS) != 0) return std::string("unshare(CLONE_NEWNS): ") + std::strerror(errno);
    if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0)
      return std::string("cannot make / private: ") + std::strerror(errno);
    return std::string();
  }();
  return why;
}

struct Tmpfs {
  std::string path;
  std::string error;
  Tmpfs(const std::string& at, std::uint64_t bytes) : path(at) {
    ::mkdir(at.c_str(), 0755);
    std::string options = "size=" + std::to_string(bytes);
    if (::mount("pxfer-test", at.c_str(), "tmpfs", 0, options.c_str()) != 0) error = std::strerror(errno);
  }
  ~Tmpfs() {
    if (error.empty()) ::umount2(path.c_str(), MNT_DETACH);
  }
};

std::uint64_t peak_rss_kib(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("VmHWM:", 0) == 0) return std::stoull(line.substr(6));
  return 0;
}

// Sets a file's mtime `seconds` into the past.
void age(const std::string& path, int seconds) {
  timespec times[2];
  ::clock_gettime(CLOCK_REALTIME, &times[0]);
  times[0].tv_sec -= seconds;
  times[1] = times[0];
  ASSERT_EQ(::utimensat(AT_FDCWD, path.c_str(), times, 0), 0) << path;
}

// 11.6 / 16.2: a put claiming 1 TiB or 1 PiB (a sparse source) is refused at once with the hint,
// pxferd's memory stays small and nothing is created; --max-file-size refuses it the same way.
using Leftovers = DirsTest;

TEST_F(Leftovers, HugeClaimRefusedFastNothingLeft) {
  if (auto why = private_mounts(); !why.empty()) GTEST_SKIP() << why;
  Tmpfs sparse(dir / "sparse", 1 * MiB);
  if (!sparse.error.empty()) GTEST_SKIP() << "cannot mount a tmpfs here: " << sparse.error;
  ServerProcess server = serve();
  for (std::uint64_t size : {std::uint64_t{1} << 40, std::uint64_t{1} << 50}) {
    std::string source = sparse.path + "/huge-" + std::to_string(size);
    int fd = ::open(source.c_str(), O_CREAT | O_WRONLY, 0644);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::ftruncate(fd, static_cast<off_t>(size)), 0);
    ::close(fd);
    auto start = SteadyClock::now();
    RunResult r = run_pxfer("put", source, server.url("huge.bin"), "--block-size", "1M");
    double took = std::chrono::duration<double>(SteadyClock::now() - start).count();
    EXPECT_EQ(r.exit_code, 8) << r.err;
    EXPECT_TRUE(contains(r.err, "free some space")) << r.err;
    EXPECT_LT(took, 3.0) << r.err;
    EXPECT_EQ(list_dir(root), std::vector<std::string>{});
  }
  EXPECT_LT(peak_rss_kib(server.pid()), 100u * 1024) << "pxferd's peak RSS";
  ServerProcess limited = serve({"--max-file-size", "1G"});
  RunResult r = run_pxfer("put", sparse.path + "/huge-" + std::to_string(std::uint64_t{1} << 40), limited.url("huge.bin"));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_TRUE(contains(r.err, "--max-file-size")) << r.err;
  EXPECT_EQ(list_dir(root), std::vector<std::string>{});
}

// 16.2: on a tmpfs barely larger than the file, the put fits (the journal's space is counted and
// reserved up front) and survives the rest of the file system filling up while it runs; a second
// put that cannot fit is refused before anything is created, with the hint.
TEST_F(Leftovers, JournalSpaceReservedWithTheFile) {
  if (auto why = private_mounts(); !why.empty()) GTEST_SKIP() << why;
  const std::uint64_t size = 16 * MiB;
  Tmpfs small(root + "/small", size + 8 * 4096 + 64 * 1024);
  if (!small.error.empty()) GTEST_SKIP() << "cannot mount a tmpfs here: " << small.error;
  make_file(local + "/f.bin", size, 1611);
  ServerProcess server = serve();
  FaultProxy proxy(server.port());
  proxy.set_rate(4 * MiB);
  ChildProcess client = start_pxfer({"put", local + "/f.bin", via(proxy, "small/f.bin"), "-p", "2", "--perf-interval", "0.1"});
  ASSERT_TRUE(pump_until(client, 30s, [&] { return moved(client, 2 * MiB); })) << client.out() << client.err();
  // Fill what is left: only what was reserved up front is still writable.
  {
    std::ofstream filler(small.path + "/filler");
    std::string chunk(4096, 'x');
    for (int i = 0; i < 4096 && filler.write(chunk.data(), static_cast<std::streamsize>(chunk.size())); ++i) {
    }
  }
  int status = client.wait(60s);
  ASSERT_EQ(status, 0) << client.err();
  EXPECT_TRUE(files_equal(local + "/f.bin", small.path + "/f.bin"));
  ::unlink((small.path + "/filler").c_str());
  make_file(local + "/g.bin", size, 1612);
  RunResult r = run_pxfer("put", local + "/g.bin", server.url("small/g.bin"));
  EXPECT_EQ(r.exit_code, 8) << r.err;
  EXPECT_TRUE(contains(r.err, "free some space")) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_EQ(list_dir(small.path), std::vector<std::string>{"f.bin"});
}

// A sparse file of `size` bytes (a hole: reading it costs no disk).
void make_hole(const std::string& path, std::uint64_t size) {
  int fd = ::open(path.c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
  ASSERT_GE(fd, 0) << path;
  ASSERT_EQ(::ftruncate(fd, static_cast<off_t>(size)), 0) << path;
  ::close(fd);
}

// Bytes the file system holds for the temporaries of `name` in `dir` (".NAME.pxfer-*").
std::uint64_t temporaries_hold(const std::string& dir, const std::string& name) {
  std::uint64_t held = 0;
  for (const auto& entry : list_dir(dir)) {
    struct stat st {};
    if (entry.rfind("." + name + ".pxfer-", 0) == 0 && ::stat((dir + "/" + entry).c_str(), &st) == 0)
      held += static_cast<std::uint64_t>(st.st_blocks) * 512;
  }
  return held;
}

// Issue 34: a put that claims 224 MiB of a 256 MiB file system and then crawls (64 KiB/s) holds
// its reservation window (64 MiB), not its claim, so another put of 64 MiB still fits. The old
// code reserved the whole claim at OPEN and refused the second put ("free some space").
TEST_F(Leftovers, AnIdleClaimHoldsOnlyTheReservationWindow) {
  if (auto why = private_mounts(); !why.empty()) GTEST_SKIP() << why;
  Tmpfs small(root + "/small", 256 * MiB);
  if (!small.error.empty()) GTEST_SKIP() << "cannot mount a tmpfs here: " << small.error;
  make_hole(local + "/claim.bin", 224 * MiB);
  ServerProcess server = serve();
  FaultProxy proxy(server.port());
  proxy.set_rate(64 * 1024);
  ChildProcess slow = start_pxfer({"put", local + "/claim.bin", via(proxy, "small/claim.bin"), "-p", "1"});
  ASSERT_TRUE(poll_until(15s, [&] { return temporaries_hold(small.path, "claim.bin") > 0; })) << server.log();
  std::this_thread::sleep_for(500ms);  // time for a reservation running ahead to show
  const std::uint64_t held = temporaries_hold(small.path, "claim.bin");
  std::printf("a 224 MiB claim holds %.1f MiB\n", static_cast<double>(held) / MiB);
  EXPECT_LE(held, 72 * MiB) << "the idle claim holds more than its reservation window";
  make_file(local + "/other.bin", 64 * MiB, 34);
  RunResult r = run_pxfer("put", local + "/other.bin", server.url("small/other.bin"), "-p", "2");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(files_equal(local + "/other.bin", small.path + "/other.bin"));
  EXPECT_FALSE(slow.try_wait().has_value()) << "the crawling put ended early: " << slow.err();
}

// --max-unfinished-per-identity: the claims of one identity's puts in progress together. With
// 64 MiB claimed by a crawling put, one of 48 MiB would pass 100M and is refused with the option
// named; one of 16 MiB fits.
TEST_F(Leftovers, APutOverTheIdentitysUnfinishedCapIsRefused) {
  make_hole(local + "/claim.bin", 64 * MiB);
  make_hole(local + "/big.bin", 48 * MiB);
  make_file(local + "/fits.bin", 16 * MiB, 35);
  ServerProcess server = serve({"--insecure-no-auth", "--max-unfinished-per-identity", "100M"});
  FaultProxy proxy(server.port());
  proxy.set_rate(64 * 1024);
  ChildProcess slow = start_pxfer({"put", local + "/claim.bin", via(proxy, "claim.bin"), "-p", "1"});
  ASSERT_TRUE(poll_until(15s, [&] { return temporaries_hold(root, "claim.bin") > 0; })) << server.log();
  RunResult over = run_pxfer("put", local + "/big.bin", server.url("big.bin"));
  EXPECT_EQ(over.exit_code, 8) << over.err;
  EXPECT_TRUE(contains(over.err, "--max-unfinished-per-identity")) << over.err;
  EXPECT_EQ(std::count(over.err.begin(), over.err.end(), '\n'), 1) << over.err;
  EXPECT_FALSE(path_exists(root + "/big.bin"));
  RunResult fits = run_pxfer("put", local + "/fits.bin", server.url("fits.bin"));
  EXPECT_EQ(fits.exit_code, 0) << fits.err;
  EXPECT_TRUE(files_equal(local + "/fits.bin", root + "/fits.bin"));
}

// 16.3: stale temporary names of every kind are swept at start and periodically, with or without
// a journal, in subdirectories too; young ones, locked ones and other names stay.
TEST_F(Leftovers, StaleTemporariesSweptAtStartAndPeriodically) {
  std::string sub = dir.subdir("root/sub");
  const std::vector<std::string> stale = {root + "/.a.bin.pxfer-0123456789abcdef", root + "/.b.bin.pxfer-part",
                                          root + "/.c.bin.pxfer-part", root + "/.c.bin.pxfer-journal",
                                          sub + "/.e.bin.pxfer-00000000ffffffff"};
  const std::string locked = root + "/.f.bin.pxfer-1111111111111111";
  const std::string young = root + "/.g.bin.pxfer-2222222222222222";
  const std::vector<std::string> others = {root + "/.hidden", root + "/x.pxfer-0123456789abcdef", root + "/.h.bin.pxfer-xyz"};
  for (const auto& p : stale) write_text(p, "stale");
  for (const auto& p : others) write_text(p, "keep");
  write_text(locked, "locked");
  for (const auto& p : stale) age(p, 3600);
  for (const auto& p : others) age(p, 3600);
  age(locked, 3600);
  int lock_fd = ::open(locked.c_str(), O_RDONLY);
  ASSERT_EQ(::flock(lock_fd, LOCK_EX), 0);
  ServerProcess server = serve({"--partial-max-age", "3s"});
  write_text(young, "young");
  EXPECT_TRUE(poll_until(5s, [&] {
    for (const auto& p : stale)
      if (path_exists(p)) return false;
    return true;
  })) << "not swept at start";
  EXPECT_TRUE(path_exists(young)) << "a young temporary file was removed";
  // Periodically: the young one goes once it is older than --partial-max-age.
  EXPECT_TRUE(poll_until(10s, [&] { return !path_exists(young); })) << "no periodic sweep";
  EXPECT_TRUE(path_exists(locked)) << "a temporary file locked by a running receiver was removed";
  for (const auto& p : others) EXPECT_TRUE(path_exists(p)) << p;
  ::close(lock_fd);
}

// 16.3: pxferd killed during a --no-resume put leaves a temporary file without a journal; the
// restarted server removes it once it is older than --partial-max-age.
TEST_F(Leftovers, NoResumeTemporaryOfAKilledServerIsSwept) {
  make_file(local + "/f.bin", 16 * MiB, 1613);
  auto server = std::make_unique<ServerProcess>(root, "127.0.0.1:0", std::vector<std::string>{"--partial-max-age", "1s"});
  FaultProxy proxy(server->port());
  proxy.set_rate(2 * MiB);
  ChildProcess client = start_pxfer({"put", local + "/f.bin", via(proxy, "f.bin"), "--no-resume", "--perf-interval", "0.1"});
  ASSERT_TRUE(pump_until(client, 30s, [&] { return moved(client, 2 * MiB); })) << client.out() << client.err();
  ::kill(server->pid(), SIGKILL);
  client.wait(30s);
  server.reset();
  ASSERT_EQ(hidden_temporaries(root).size(), 1u);
  std::this_thread::sleep_for(1500ms);
  ServerProcess restarted = serve({"--partial-max-age", "1s"});
  EXPECT_TRUE(poll_until(5s, [&] { return hidden_temporaries(root).empty(); })) << "left: " << hidden_temporaries(root).size();
}

// 16.3, client side: a get killed during --no-resume leaves a temporary file without a journal in
// the client's directory; the next get into that directory removes it once older than
// --partial-max-age.
TEST_F(Leftovers, NoResumeTemporaryOfAKilledGetIsSweptByTheNextGet) {
  make_file(root + "/f.bin", 16 * MiB, 1617);
  ServerProcess server = serve();
  FaultProxy proxy(server.port());
  proxy.set_rate(2 * MiB);
  ChildProcess client = start_pxfer({"get", via(proxy, "f.bin"), local + "/f.bin", "--no-resume", "--perf-interval", "0.1"});
  ASSERT_TRUE(pump_until(client, 30s, [&] { return moved(client, 2 * MiB); })) << client.out() << client.err();
  client.send_signal(SIGKILL);
  client.wait(10s);
  ASSERT_EQ(hidden_temporaries(local).size(), 1u);
  std::this_thread::sleep_for(1500ms);
  proxy.set_rate(0);
  RunResult again = run_pxfer("get", via(proxy, "f.bin"), local + "/f.bin", "--partial-max-age", "1s");
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_TRUE(files_equal(root + "/f.bin", local + "/f.bin"));
  EXPECT_EQ(list_dir(local), std::vector<std::string>{"f.bin"});
}

// 16.4: the server committed the file but its RESULT never reached the client: the retry finds the
// same transfer committed (same id, size and checksum) and reports success, moving nothing again.
TEST_F(Leftovers, LostResultAfterCommitIsASuccess) {
  const std::uint64_t size = 24 * MiB;
  make_file(local + "/f.bin", size, 1614);
  ServerProcess server = serve();
  FaultProxy proxy(server.port());
  proxy.set_rate(8 * MiB);
  ChildProcess client = start_pxfer({"put", local + "/f.bin", via(proxy, "f.bin"), "-p", "2", "--perf-interval", "0.1",
                                     "--stall-timeout", "3s", "--retries", "2", "--checksum", "sha256"});
  ASSERT_TRUE(pump_until(client, 30s, [&] { return moved(client, 16 * MiB); })) << client.out() << client.err();
  proxy.inject_now(0, Fault::stall_to_client);  // the control connection: RESULT will not arrive
  ASSERT_TRUE(poll_until(30s, [&] { return path_exists(root + "/f.bin"); })) << "the server never committed";
  const std::size_t retry_first = proxy.accepted();
  int status = client.wait(60s);
  ASSERT_EQ(status, 0) << client.err();
  EXPECT_TRUE(contains(client.err(), "retrying in")) << client.err();
  EXPECT_TRUE(files_equal(local + "/f.bin", root + "/f.bin"));
  EXPECT_LT(proxy.carried_since(retry_first).to_server, 1 * MiB) << "the retry moved the file again";
  EXPECT_TRUE(contains(server.log(), "a put that committed already")) << server.log();
  EXPECT_EQ(list_dir(root), std::vector<std::string>{"f.bin"});
}

// 16.5: a client dies without its connections closing (its host crashed: the proxy stops
// forwarding them); the same command run again at once takes over the stale transfer and resumes.
TEST_F(Leftovers, RerunTakesOverTheTransferOfADeadClient) {
  make_file(local + "/f.bin", 48 * MiB, 1615);
  ServerProcess server = serve();
  FaultProxy proxy(server.port());
  proxy.set_rate(8 * MiB);
  std::vector<std::string> args = {"put", local + "/f.bin", via(proxy, "f.bin"), "-p", "2"};
  std::vector<std::string> first_args = args;
  for (const char* a : {"--perf-interval", "0.1"}) first_args.emplace_back(a);
  ChildProcess first = start_pxfer(first_args);
  ASSERT_TRUE(pump_until(first, 30s, [&] { return moved(first, 12 * MiB); })) << first.out() << first.err();
  ASSERT_TRUE(pump_until(first, 30s, [&] { return journaled_blocks(root, "f.bin") >= 2; })) << first.err();
  proxy.inject_all(Fault::stall);  // the server hears nothing more, not even the close
  std::this_thread::sleep_for(300ms);  // every pump thread past the write it may have been in
  first.send_signal(SIGKILL);
  first.wait(10s);
  proxy.set_rate(0);
  auto start = SteadyClock::now();
  RunResult again = run_pxfer_args(args, 60s);
  double took = std::chrono::duration<double>(SteadyClock::now() - start).count();
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_LT(took, 15.0);
  EXPECT_TRUE(contains(again.out, "resumed: ")) << again.out;
  EXPECT_TRUE(contains(server.log(), "a retry of a running put takes it over")) << server.log();
  EXPECT_TRUE(files_equal(local + "/f.bin", root + "/f.bin"));
  EXPECT_EQ(list_dir(root), std::vector<std::string>{"f.bin"});
}

// 16.6: the destination directory removed, or renamed, during a put: the put fails at the next
// block with a clear line, long before every byte moved, and leaves nothing under either name.
class DirectoryGone : public DirsTest, public ::testing::WithParamInterface<const char*> {};

TEST_P(DirectoryGone, NoticedAtTheNextBlock) {
  const bool rename_it = std::string(GetParam()) == "renamed";
  std::string sub = dir.subdir("root/sub");
  make_file(local + "/f.bin", 64 * MiB, 1616);
  ServerProcess server = serve();
  FaultProxy proxy(server.port());
  proxy.set_rate(8 * MiB);
  ChildProcess client = start_pxfer({"put", local + "/f.bin", via(proxy, "sub/f.bin"), "-p", "2", "--perf-interval", "0.1"});
  ASSERT_TRUE(pump_until(client, 30s, [&] { return moved(client, 6 * MiB); })) << client.out() << client.err();
  if (rename_it) {
    ASSERT_EQ(::rename(sub.c_str(), (root + "/moved").c_str()), 0);
  } else {
    for (const auto& name : list_dir(sub)) ::unlink((sub + "/" + name).c_str());
    ASSERT_EQ(::rmdir(sub.c_str()), 0);
  }
  int status = client.wait(30s);
  EXPECT_EQ(status, 3) << client.err();  // not found
  EXPECT_TRUE(contains(client.err(), "destination directory was removed or renamed")) << client.err();
  std::uint64_t last = 0;
  for (auto b : rate_line_bytes(client.out())) last = std::max(last, b);
  EXPECT_LT(last, 40 * MiB) << "noticed only after most bytes moved";
  if (rename_it) {
    EXPECT_TRUE(poll_until(5s, [&] { return list_dir(root + "/moved").empty(); })) << "left in the renamed directory";
  }
}

INSTANTIATE_TEST_SUITE_P(Leftovers, DirectoryGone, ::testing::Values("removed", "renamed"),
                         [](const ::testing::TestParamInfo<const char*>& p) { return std::string(p.param); });

}  // namespace
}  // namespace pxfer::e2e
