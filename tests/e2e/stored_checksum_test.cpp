// Stored checksums (docs/protocol.md "Stored checksums", io/stored_checksum.hpp), against a real
// pxferd: a put keeps the verified checksum with the file; SUM and a get of the whole file answer
// from it while it describes the file; a file changed behind it (bytes rewritten, size and mtime
// set back) is checksummed again from its bytes; a value that no longer matches the bytes
// (what a disk's silent corruption under an unchanged inode looks like) fails the get instead of
// passing it; --no-stored-checksums neither keeps nor reads one.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <string>

#include "support/e2e.hpp"

namespace pxfer::e2e {
namespace {

constexpr int exit_integrity = 7;
constexpr const char* attribute = "user.pxfer.adler32";

std::string stored_value(const std::string& path) {
  char buf[200];
  ssize_t n = ::getxattr(path.c_str(), attribute, buf, sizeof buf);
  return n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : std::string();
}

// The hex at the end of "pxfer1 SIZE MTIME STORED_AT HEX"; empty when none is stored.
std::string stored_hex(const std::string& path) {
  std::string v = stored_value(path);
  auto space = v.rfind(' ');
  return space == std::string::npos ? std::string() : v.substr(space + 1);
}

// A value in pxferd's format that describes the file as it is now, but with other hex: what a
// stored checksum looks like once the bytes beneath an unchanged inode went bad.
void forge(const std::string& path, const std::string& hex) {
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  timespec now{};
  ::clock_gettime(CLOCK_REALTIME, &now);
  const long long mtime = static_cast<long long>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
  const long long at = static_cast<long long>(now.tv_sec) * 1'000'000'000 + now.tv_nsec;
  const std::string v = "pxfer1 " + std::to_string(st.st_size) + " " + std::to_string(mtime) + " " + std::to_string(at) + " " + hex;
  ASSERT_EQ(::setxattr(path.c_str(), attribute, v.data(), v.size(), 0), 0) << std::strerror(errno);
}

std::string sum_of(const ServerProcess& server, const std::string& path) {
  RunResult r = run_pxfer("sum", server.url(path));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  auto space = r.out.rfind(' ');
  std::string v = space == std::string::npos ? r.out : r.out.substr(space + 1);
  while (!v.empty() && (v.back() == '\n' || v.back() == '\r')) v.pop_back();
  return v;
}

class StoredChecksums : public DirsTest {
 protected:
  void SetUp() override {
    const std::string probe = root + "/probe";
    write_text(probe, "x");
    if (::setxattr(probe.c_str(), "user.pxfer.probe", "1", 1, 0) != 0)
      unavailable = std::string("the test's file system keeps no user extended attributes: ") + std::strerror(errno);
    ::unlink(probe.c_str());
  }
  std::string unavailable;
};

TEST_F(StoredChecksums, APutKeepsTheVerifiedChecksumAndSumAndGetAnswerFromIt) {
  if (!unavailable.empty()) GTEST_SKIP() << unavailable;
  ServerProcess server = serve();
  const std::string big = local + "/big.bin", small = local + "/small.bin";
  make_file(big, 9 * MiB + 17, 1);  // several blocks: the engine's commit
  make_file(small, 3000, 2);
  ASSERT_EQ(run_pxfer("put", "-q", big, server.url("big.bin")).exit_code, 0);
  ASSERT_EQ(run_pxfer("put", "-q", "-r", local, server.url("tree")).exit_code, 0);  // small files: PUT_SMALL
  EXPECT_EQ(stored_hex(root + "/big.bin"), adler32_hex(big)) << stored_value(root + "/big.bin");
  EXPECT_EQ(stored_hex(root + "/tree/small.bin"), adler32_hex(small)) << "PUT_SMALL keeps it too: " << list_dir(root + "/tree").size();
  EXPECT_EQ(sum_of(server, "big.bin"), adler32_hex(big));

  // SUM answers from the stored value (a forged one shows it), and a get compares the bytes it
  // received with it: a stored value that no longer matches the bytes fails the get, nothing kept.
  forge(root + "/big.bin", "00000001");
  EXPECT_EQ(sum_of(server, "big.bin"), "00000001");
  RunResult bad = run_pxfer("get", "-q", "--retries", "0", server.url("big.bin"), local + "/back.bin");
  EXPECT_EQ(bad.exit_code, exit_integrity) << bad.err;
  EXPECT_FALSE(path_exists(local + "/back.bin"));
  EXPECT_NE(bad.err.find("checksum"), std::string::npos) << bad.err;

  // The same for a small file of get -r (GET_SMALL): the stored value is what the client checks.
  forge(root + "/tree/small.bin", "00000001");
  RunResult tree = run_pxfer("get", "-q", "-r", "--retries", "0", server.url("tree"), local + "/back");
  EXPECT_NE(tree.exit_code, 0) << tree.err;
  EXPECT_FALSE(path_exists(local + "/back/tree/small.bin")) << tree.err;
  EXPECT_NE(tree.err.find("small.bin"), std::string::npos) << tree.err;
}

TEST_F(StoredChecksums, BytesRewrittenBehindTheValueWithSizeAndMtimeSetBackAreChecksummedAgain) {
  if (!unavailable.empty()) GTEST_SKIP() << unavailable;
  ServerProcess server = serve();
  const std::string src = local + "/f.bin";
  make_file(src, 5 * MiB, 3);
  ASSERT_EQ(run_pxfer("put", "-q", src, server.url("f.bin")).exit_code, 0);
  const std::string stored = root + "/f.bin";
  ASSERT_EQ(stored_hex(stored), adler32_hex(src));
  struct stat before {};
  ASSERT_EQ(::stat(stored.c_str(), &before), 0);
  ::sleep(1);
  ::usleep(200'000);
  make_file(stored, 5 * MiB, 4);  // other bytes, same size
  struct timespec times[2] = {{0, UTIME_OMIT}, before.st_mtim};
  ASSERT_EQ(::utimensat(AT_FDCWD, stored.c_str(), times, 0), 0);
  ASSERT_NE(adler32_hex(stored), adler32_hex(src));
  EXPECT_EQ(sum_of(server, "f.bin"), adler32_hex(stored));
  RunResult get = run_pxfer("get", "-q", server.url("f.bin"), local + "/back.bin");
  ASSERT_EQ(get.exit_code, 0) << get.err;
  EXPECT_EQ(sha256_hex(local + "/back.bin"), sha256_hex(stored));
}

TEST_F(StoredChecksums, AGetOrSumOfAQuietFileKeepsTheChecksumItComputedAndPreserveKeepsItValid) {
  if (!unavailable.empty()) GTEST_SKIP() << unavailable;
  ServerProcess server = serve();
  make_file(root + "/a.bin", 6 * MiB + 5, 5);
  make_file(root + "/b.bin", 1 * MiB, 6);
  ::sleep(1);
  ::usleep(200'000);  // quiet for more than a second: a write in the same clock tick is ruled out
  ASSERT_EQ(run_pxfer("get", "-q", server.url("a.bin"), local + "/a.bin").exit_code, 0);
  EXPECT_EQ(stored_hex(root + "/a.bin"), adler32_hex(root + "/a.bin")) << "kept once the client confirmed it";
  EXPECT_EQ(sum_of(server, "b.bin"), adler32_hex(root + "/b.bin"));
  EXPECT_EQ(stored_hex(root + "/b.bin"), adler32_hex(root + "/b.bin"));

  // put --preserve sets the mode and mtime after the file is in place; the bytes stay, so does
  // their checksum.
  const std::string src = local + "/p.bin";
  make_file(src, 4 * MiB, 7);
  ASSERT_EQ(::utimensat(AT_FDCWD, src.c_str(), nullptr, 0), 0);
  RunResult put = run_pxfer("put", "-q", "--preserve", src, server.url("p.bin"));
  ASSERT_EQ(put.exit_code, 0) << put.err;
  const std::string value = stored_value(root + "/p.bin");
  EXPECT_EQ(stored_hex(root + "/p.bin"), adler32_hex(src));
  struct stat st {};
  ASSERT_EQ(::stat((root + "/p.bin").c_str(), &st), 0);
  struct stat source {};
  ASSERT_EQ(::stat(src.c_str(), &source), 0);
  ASSERT_EQ(st.st_mtim.tv_sec, source.st_mtim.tv_sec) << "--preserve set the source's mtime";
  const long long mtime = static_cast<long long>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
  EXPECT_NE(value.find(" " + std::to_string(mtime) + " "), std::string::npos)
      << "recorded again for the new mtime, so it still describes the file: " << value;
}

TEST_F(StoredChecksums, NoStoredChecksumsNeitherKeepsNorReadsOne) {
  if (!unavailable.empty()) GTEST_SKIP() << unavailable;
  ServerProcess server = serve({"--no-stored-checksums"});
  const std::string src = local + "/f.bin";
  make_file(src, 3 * MiB, 8);
  ASSERT_EQ(run_pxfer("put", "-q", src, server.url("f.bin")).exit_code, 0);
  EXPECT_EQ(stored_value(root + "/f.bin"), "");
  forge(root + "/f.bin", "00000003");
  EXPECT_EQ(sum_of(server, "f.bin"), adler32_hex(src));
  RunResult get = run_pxfer("get", "-q", server.url("f.bin"), local + "/back.bin");
  EXPECT_EQ(get.exit_code, 0) << get.err;
}

}  // namespace
}  // namespace pxfer::e2e
