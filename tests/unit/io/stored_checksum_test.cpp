// A checksum kept in a file's extended attributes (io/stored_checksum.hpp) is used only while it
// describes the file: a change of the bytes that keeps the size and sets the mtime back, a value
// in another format, a file of the export written a moment ago: none of these may answer.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "io/stored_checksum.hpp"
#include "test_support.hpp"

namespace pxfer {
namespace {

using test::random_bytes;
using test::TempDir;
using test::write_file;

constexpr const char* adler = "0123abcd";

struct Opened {
  explicit Opened(const std::string& path) : fd(::open(path.c_str(), O_RDWR | O_CLOEXEC)) {}
  ~Opened() {
    if (fd >= 0) ::close(fd);
  }
  int fd;
};

// Extended attributes of the user namespace where the scratch directory lives, or why not.
std::string xattr_unavailable(const std::string& path) {
  if (::setxattr(path.c_str(), "user.pxfer.probe", "1", 1, 0) == 0) {
    ::removexattr(path.c_str(), "user.pxfer.probe");
    return {};
  }
  return std::string("the scratch file system keeps no user extended attributes: ") + std::strerror(errno);
}

TEST(StoredChecksum, AValueStoredForTheFileAsItIsIsReadBack) {
  TempDir tmp;
  const std::string path = tmp / "f";
  write_file(path, random_bytes(10000, 1));
  if (auto why = xattr_unavailable(path); !why.empty()) GTEST_SKIP() << why;
  Opened f(path);
  auto seen = stamp_of(f.fd);
  ASSERT_TRUE(seen);
  ASSERT_TRUE(record_checksum(f.fd, ChecksumAlgo::adler32, adler));
  EXPECT_EQ(stored_checksum(f.fd, ChecksumAlgo::adler32), std::optional<std::string>(adler));
  EXPECT_FALSE(stored_checksum(f.fd, ChecksumAlgo::sha256)) << "one value per algorithm";
}

TEST(StoredChecksum, BytesChangedWithSizeAndMtimeSetBackAreNeverAnsweredFromTheOldValue) {
  TempDir tmp;
  const std::string path = tmp / "f";
  write_file(path, random_bytes(10000, 2));
  if (auto why = xattr_unavailable(path); !why.empty()) GTEST_SKIP() << why;
  Opened f(path);
  auto seen = stamp_of(f.fd);
  ASSERT_TRUE(record_checksum(f.fd, ChecksumAlgo::adler32, adler));
  // What `cp` over the file and `touch -d` of its old time would leave: same size, same mtime.
  ::sleep(1);
  ::usleep(200'000);
  ASSERT_EQ(::pwrite(f.fd, "X", 1, 10), 1);
  struct timespec times[2] = {{0, UTIME_OMIT}, {seen->mtime_ns / 1'000'000'000, seen->mtime_ns % 1'000'000'000}};
  ASSERT_EQ(::futimens(f.fd, times), 0);
  auto now = stamp_of(f.fd);
  ASSERT_EQ(now->size, seen->size);
  ASSERT_EQ(now->mtime_ns, seen->mtime_ns);
  EXPECT_FALSE(stored_checksum(f.fd, ChecksumAlgo::adler32)) << "the ctime moved: the value describes other bytes";
}

TEST(StoredChecksum, AFileOfTheExportWrittenAMomentAgoIsNotRecorded) {
  TempDir tmp;
  const std::string path = tmp / "f";
  write_file(path, random_bytes(1000, 3));
  if (auto why = xattr_unavailable(path); !why.empty()) GTEST_SKIP() << why;
  Opened f(path);
  auto seen = stamp_of(f.fd);
  // A second write in the same tick of the file system's clock would not move the mtime.
  EXPECT_FALSE(store_checksum(f.fd, ChecksumAlgo::adler32, adler, *seen));
  EXPECT_FALSE(stored_checksum(f.fd, ChecksumAlgo::adler32));
}

TEST(StoredChecksum, AFileThatChangedSinceItWasSeenIsNotRecorded) {
  TempDir tmp;
  const std::string path = tmp / "f";
  write_file(path, random_bytes(1000, 4));
  if (auto why = xattr_unavailable(path); !why.empty()) GTEST_SKIP() << why;
  Opened f(path);
  ::sleep(1);
  ::usleep(200'000);  // quiet for over a second: only the change below can refuse it
  auto seen = stamp_of(f.fd);
  ASSERT_EQ(::pwrite(f.fd, "XY", 2, 1000), 2);  // grew while it was being read
  EXPECT_FALSE(store_checksum(f.fd, ChecksumAlgo::adler32, adler, *seen));
  EXPECT_FALSE(stored_checksum(f.fd, ChecksumAlgo::adler32));
}

TEST(StoredChecksum, ValuesInAnotherFormatAreIgnored) {
  TempDir tmp;
  const std::string path = tmp / "f";
  write_file(path, random_bytes(1000, 5));
  if (auto why = xattr_unavailable(path); !why.empty()) GTEST_SKIP() << why;
  Opened f(path);
  auto seen = stamp_of(f.fd);
  const std::string name = stored_checksum_name(ChecksumAlgo::adler32);
  EXPECT_EQ(name, "user.pxfer.adler32");
  const std::string far_future = "9999999999999999999";
  for (std::string value : {std::string("0123abcd"), "pxfer1 1000 " + std::to_string(seen->mtime_ns) + " " + far_future + " 0123abcd",
                            "pxfer1 1000 " + std::to_string(seen->mtime_ns) + " " + far_future + "0 0123ABCD",
                            "pxfer1 999 " + std::to_string(seen->mtime_ns) + " 4000000000000000000 0123abcd",
                            "pxfer1 1000 " + std::to_string(seen->mtime_ns) + " 4000000000000000000 0123abc",
                            "pxfer1 1000 " + std::to_string(seen->mtime_ns) + " 4000000000000000000 0123abcdz",
                            "pxfer2 1000 " + std::to_string(seen->mtime_ns) + " 4000000000000000000 0123abcd"}) {
    ASSERT_EQ(::fsetxattr(f.fd, name.c_str(), value.data(), value.size(), 0), 0);
    EXPECT_FALSE(stored_checksum(f.fd, ChecksumAlgo::adler32)) << value;
  }
  // The format itself: accepted with the right size and mtime and a recording time after the ctime.
  const std::string good = "pxfer1 1000 " + std::to_string(seen->mtime_ns) + " 4000000000000000000 0123abcd";
  ASSERT_EQ(::fsetxattr(f.fd, name.c_str(), good.data(), good.size(), 0), 0);
  EXPECT_EQ(stored_checksum(f.fd, ChecksumAlgo::adler32), std::optional<std::string>(adler));
  EXPECT_FALSE(record_checksum(f.fd, ChecksumAlgo::adler32, "not hex!"));
}

}  // namespace
}  // namespace pxfer
