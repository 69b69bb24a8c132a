// Issue 11 point 7, attacked end to end: requests that make pxferd do slow or blocking file work
// (a FIFO in the export, sha256 SUMs of a huge file, LISTs of a big tree) must not stall the
// server, delay another client's handshake, or grow its memory with the size of the tree.
// On the build before the blocking pool, each of these fails: the FIFO's open hangs a network
// thread (the get times out), two SUMs hold both network threads of `--threads 2` (the third
// client's handshake waits for a whole hash), and every LIST built its whole answer in memory.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <sstream>
#include <thread>
#include <vector>

#include "pxfer/client/client.hpp"
#include "pxfer/common/error.hpp"
#include "client/remote_tree.hpp"
#include "pxfer/common/url.hpp"
#include "support/e2e.hpp"

namespace pxfer::e2e {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// A value of /proc/PID/status in KiB ("VmHWM", "VmRSS"); -1 when missing.
long status_kib(pid_t pid, const std::string& key) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(in, line);)
    if (line.starts_with(key + ":")) return std::stol(line.substr(key.size() + 1));
  return -1;
}

// CPU time (user + system) process `pid` used so far, in seconds.
double cpu_seconds(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::istringstream fields(text.substr(text.rfind(')') + 2));  // after "PID (COMM) "
  std::string field;
  unsigned long long utime = 0, stime = 0;
  for (int i = 3; i <= 15 && fields >> field; ++i) {  // fields 14 and 15 of proc(5)
    if (i == 14) utime = std::stoull(field);
    if (i == 15) stime = std::stoull(field);
  }
  return static_cast<double>(utime + stime) / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

// A file of `size` bytes that costs no disk: a hole, made with ftruncate.
void make_sparse(const std::string& path, std::uint64_t size) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  ASSERT_GE(fd, 0) << path;
  ASSERT_EQ(::ftruncate(fd, static_cast<off_t>(size)), 0) << path;
  ::close(fd);
}

// TLS handshake, HELLO and AUTH (and an INFO) of a fresh client: how long it took, in seconds
// (a failure, such as the client's 10 s handshake timeout, counts as the time it took, and is
// reported).
double login_seconds(const ServerProcess& server) {
  auto start = Clock::now();
  try {
    server_limits(parsed_url(server, ""), std::chrono::milliseconds(10'000));
  } catch (const std::exception& e) {
    ADD_FAILURE() << "a fresh client could not log in: " << e.what();
  }
  return seconds_since(start);
}

class Blocking : public DirsTest {
 protected:
  Blocking() : DirsTest(big_file_base()) {}  // tmpfs where there is one: 50,000 files are made in a second
};

// A FIFO opened for reading waits for a writer: pxferd must refuse it at once (it is not a
// regular file), for a get and for a SUM, and go on serving.
TEST_F(Blocking, FifoInTheExportIsRefusedQuicklyAndTheServerKeepsServing) {
  ASSERT_EQ(::mkfifo((root + "/pipe").c_str(), 0644), 0);
  make_file(root + "/ok.bin", 300 * KiB, 3);
  ServerProcess server = serve({"--threads", "1"});

  auto start = Clock::now();
  RunResult got = run_pxfer_args({"get", server.url("pipe"), local + "/pipe.out"}, 20s);
  EXPECT_FALSE(got.timed_out) << "the get of a FIFO hung";
  EXPECT_NE(got.exit_code, 0) << got.out;
  EXPECT_NE(got.err.find("not a regular file"), std::string::npos) << got.err;
  EXPECT_LT(seconds_since(start), 10.0);
  EXPECT_FALSE(path_exists(local + "/pipe.out"));

  // --skip-existing asks for the FIFO's checksum when a local file of its size (0) exists.
  write_text(local + "/pipe.same", "");
  start = Clock::now();
  std::optional<Error> refused;
  try {
    ClientOptions options;
    ClientSession session(options);
    session.remote_sum(parsed_url(server, "pipe"), ChecksumAlgo::sha256, 0, std::chrono::milliseconds(10'000));
  } catch (const Error& e) {
    refused = e;
  }
  ASSERT_TRUE(refused.has_value()) << "a SUM of a FIFO should be refused";
  EXPECT_NE(std::string(refused->what()).find("not a regular file"), std::string::npos) << refused->what();
  EXPECT_LT(seconds_since(start), 10.0);

  RunResult ok = run_pxfer_args({"get", server.url("ok.bin"), local + "/ok.bin"}, 30s);
  ASSERT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_TRUE(files_equal(root + "/ok.bin", local + "/ok.bin"));
  EXPECT_LT(login_seconds(server), 2.0);
}

// Two clients ask for the sha256 of a file of several GiB (a hole: reading it costs CPU, no
// disk); a third client's handshake and login must still complete within 2 s. The server has two
// network threads, as many as the two SUMs: before the blocking pool, each SUM held one.
TEST_F(Blocking, TwoSlowSumsDoNotDelayAThirdClientsLogin) {
  constexpr std::uint64_t size = 8 * GiB;
  make_sparse(root + "/huge.bin", size);
  ServerProcess server = serve({"--threads", "2"});
  const Url huge = parsed_url(server, "huge.bin");
  ASSERT_LT(login_seconds(server), 2.0) << "the server is slow before any SUM";

  std::atomic<int> answered{0};
  std::vector<std::jthread> sums;  // joined even when an assertion returns early
  for (int i = 0; i < 2; ++i)
    sums.emplace_back([&] {
      try {
        ClientOptions options;
        ClientSession session(options);
        session.remote_sum(huge, ChecksumAlgo::sha256, size, std::chrono::milliseconds(10'000));
      } catch (const Error&) {
        // Cut off when the server stops below; only the timing of the third client matters here.
      }
      ++answered;
    });
  // The SUMs are hashing once the server has burnt a second of CPU time; wait for that (rather
  // than a fixed sleep) so that on a loaded machine the third client does not log in too early.
  const double cpu_at_start = cpu_seconds(server.pid());
  for (auto until = Clock::now() + 10s; Clock::now() < until && cpu_seconds(server.pid()) - cpu_at_start < 1.0;)
    std::this_thread::sleep_for(50ms);
  ASSERT_GE(cpu_seconds(server.pid()) - cpu_at_start, 1.0) << "the SUMs did not start hashing within 10 s";
  const double login = login_seconds(server);
  const int done_early = answered.load();
  auto stopped = server.stop(10s);
  sums.clear();
  std::printf("third client's handshake + login beside two SUMs: %.3f s\n", login);
  EXPECT_EQ(done_early, 0) << "the SUMs ended before the third client logged in: the file is too small to test this";
  EXPECT_LT(login, 2.0) << "a third client's handshake and login took " << login << " s while two SUMs ran";
  EXPECT_FALSE(stopped.killed) << "pxferd did not stop within 10 s of SIGTERM while hashing";
}

// Two identities saturate the blocking pool with sha256 SUMs of a big hole (two each, as many as
// --max-slow-requests-per-identity allows; four, as many as the pool has threads): a third
// identity's LIST is still answered within 2 s. Before the pool shared its threads per identity
// (policy/fair_share.hpp), the LIST waited in the one queue until a SUM ended (issue 34: 33.8 s).
TEST_F(Blocking, AThirdIdentitysListIsServedWhileTwoOthersFillThePoolWithSums) {
  constexpr std::uint64_t size = 16 * GiB;
  make_sparse(root + "/huge.bin", size);
  make_file(root + "/small.bin", 1000, 5);
  const std::string tokens = dir.subdir("etc") + "/tokens";
  const std::string token_a = create_token("alice", tokens), token_b = create_token("bob", tokens),
                    token_c = create_token("carol", tokens);
  ServerProcess server = serve({"--tokens", tokens});
  const Url huge = parsed_url(server, "huge.bin");
  std::atomic<int> answered{0};
  std::vector<std::jthread> sums;  // joined even when an assertion returns early
  for (const std::string* token : {&token_a, &token_a, &token_b, &token_b})
    sums.emplace_back([&, token] {
      try {
        ClientOptions options;
        ClientSession session(options, ClientSecurity{"", server.fingerprint(), "/dev/null", *token, "", ""});
        session.remote_sum(huge, ChecksumAlgo::sha256, size, std::chrono::milliseconds(10'000));
      } catch (const Error&) {
        // Cut off when the server stops below; only the timing of the LIST matters here.
      }
      ++answered;
    });
  // The SUMs are hashing once the server has burnt 2 s of CPU time.
  const double cpu_at_start = cpu_seconds(server.pid());
  for (auto until = Clock::now() + 15s; Clock::now() < until && cpu_seconds(server.pid()) - cpu_at_start < 2.0;)
    std::this_thread::sleep_for(50ms);
  ASSERT_GE(cpu_seconds(server.pid()) - cpu_at_start, 2.0) << "the SUMs did not start hashing within 15 s";
  set_client_security(ClientSecurity{"", server.fingerprint(), "/dev/null", token_c, "", ""});
  const auto start = Clock::now();
  std::size_t listed = 0;
  std::string error;
  try {
    listed = list_remote(parsed_url(server, ""), std::chrono::milliseconds(10'000)).size();
  } catch (const std::exception& e) {
    error = e.what();
  }
  const double took = seconds_since(start);
  set_client_security(ClientSecurity{});
  const int done_early = answered.load();
  auto stopped = server.stop(10s);
  sums.clear();
  std::printf("carol's LIST beside four SUMs of alice and bob: %.3f s\n", took);
  EXPECT_EQ(error, "");
  EXPECT_EQ(listed, 2u);
  EXPECT_EQ(done_early, 0) << "the SUMs ended before the LIST: the file is too small to test this";
  EXPECT_LT(took, 2.0) << "a third identity's LIST took " << took << " s while two others' SUMs filled the pool";
  EXPECT_FALSE(stopped.killed) << "pxferd did not stop within 10 s of SIGTERM while hashing";
}

// Four clients LIST a tree of 50,000 entries at once: pxferd's peak RSS stays under 100 MiB
// (the answer is walked and sent a frame at a time), and every client gets every entry. The
// entries sit below a few directories with long names, as real trees often do, so that each
// relative path is about 1.5 KB: a server that holds a whole answer needs about 75 MB per LIST.
TEST_F(Blocking, FourListsOfABigTreeKeepTheServersMemoryBounded) {
  constexpr int levels = 6, dirs = 50, files_per_dir = 999;  // 6 + 50 + 50 * 999 = 50,006 entries
  const auto start = Clock::now();
  // Created through descriptors: a path walk over 1.5 KB for each of 50,000 files costs seconds.
  int deep = ::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  ASSERT_GE(deep, 0) << root;
  for (int l = 0; l < levels; ++l) {
    const std::string name = std::string(230, static_cast<char>('a' + l)) + "-level-" + std::to_string(l);
    ASSERT_EQ(::mkdirat(deep, name.c_str(), 0755), 0) << name;
    int next = ::openat(deep, name.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    ASSERT_GE(next, 0) << name;
    ::close(deep);
    deep = next;
  }
  for (int d = 0; d < dirs; ++d) {
    char name[64];
    std::snprintf(name, sizeof name, "directory-with-a-long-name-%03d", d);
    ASSERT_EQ(::mkdirat(deep, name, 0755), 0) << name;
    int sub = ::openat(deep, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    ASSERT_GE(sub, 0) << name;
    for (int f = 0; f < files_per_dir; ++f) {
      std::snprintf(name, sizeof name, "a-file-with-a-rather-long-name-%06d.dat", f);
      int fd = ::openat(sub, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
      ASSERT_GE(fd, 0) << name;
      ::close(fd);
    }
    ::close(sub);
  }
  ::close(deep);
  std::printf("tree made in %.2f s\n", seconds_since(start));
  constexpr std::size_t entries = levels + dirs + dirs * files_per_dir;
  auto made = Clock::now();
  ServerProcess server = serve({"--threads", "2"});
  const long before = status_kib(server.pid(), "VmHWM");
  ASSERT_GT(before, 0) << "no VmHWM in /proc/" << server.pid() << "/status";

  std::vector<std::size_t> counts(4, 0);
  std::vector<std::string> errors(4);
  std::vector<std::jthread> lists;
  for (int i = 0; i < 4; ++i)
    lists.emplace_back([&, i] {
      try {
        counts[i] = list_remote(parsed_url(server, ""), std::chrono::milliseconds(10'000)).size();
      } catch (const std::exception& e) {
        errors[i] = e.what();
      }
    });
  // A fresh client while the LISTs run (they take a second or two here): its login is not held up.
  std::this_thread::sleep_for(200ms);
  const double login = login_seconds(server);
  lists.clear();
  std::printf("four LISTs took %.2f s; a login during them %.3f s\n", seconds_since(made), login);
  EXPECT_LT(login, 2.0);
  const long peak = status_kib(server.pid(), "VmHWM");
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(errors[i], "") << "LIST " << i;
    EXPECT_EQ(counts[i], entries) << "LIST " << i;
  }
  std::printf("pxferd VmHWM: %ld KiB before the LISTs, %ld KiB after\n", before, peak);
  EXPECT_LT(peak, 100L * 1024) << "pxferd's peak RSS went from " << before << " KiB to " << peak << " KiB";
}

}  // namespace
}  // namespace pxfer::e2e
