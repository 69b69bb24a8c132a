// Issue 36: streamed I/O through the client library (pxfer::RemoteFile, the gfal2 plugin's open,
// read, write, pread, pwrite, close) against a real pxferd: a write is a hidden temporary until its
// close, bytes come back as written across chunk boundaries, a gap and an existing name are
// refused, and a write never closed leaves nothing behind.
#include <gtest/gtest.h>

#include <dirent.h>

#include <random>
#include <thread>

#include "pxfer/error.hpp"
#include "pxfer/stream_io.hpp"
#include "support/e2e.hpp"

namespace pxfer::e2e {
namespace {

std::vector<std::uint8_t> random_bytes(std::size_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::vector<std::uint8_t> out(n);
  for (auto& b : out) b = static_cast<std::uint8_t>(gen());
  return out;
}

std::vector<std::uint8_t> bytes_of(const std::string& path) {
  const std::string text = read_text(path);
  return std::vector<std::uint8_t>(text.begin(), text.end());
}

// Names in `dir` (hidden ones too), but . and ..
std::vector<std::string> names_in(const std::string& dir) {
  std::vector<std::string> out;
  DIR* d = ::opendir(dir.c_str());
  while (dirent* e = d ? ::readdir(d) : nullptr)
    if (std::string(e->d_name) != "." && std::string(e->d_name) != "..") out.push_back(e->d_name);
  if (d) ::closedir(d);
  return out;
}

class StreamIo : public ::testing::Test {
 protected:
  StreamIo() : root(dir.subdir("root")), server(root) {}
  ClientSecurity security() const { return ClientSecurity{"", server.fingerprint(), "/dev/null", "", "", ""}; }
  Url url(const std::string& path) const { return *parse_url(server.url(path)); }
  TempDir dir;
  std::string root;
  ServerProcess server;
};

TEST_F(StreamIo, AWriteAppearsWholeAtItsCloseAndReadsBackAcrossChunks) {
  const auto data = random_bytes(5 * 1024 * 1024 + 17, 1);  // over one 4 MiB chunk
  RemoteFile out = RemoteFile::open_write(security(), url("w.bin"), {});
  out.write_at(0, std::span(data).first(1000));
  out.write_at(1000, std::span(data).subspan(1000));  // cut in two requests by the library
  const std::vector<std::uint8_t> patch(300, 0x5a);
  out.write_at(4000, patch);  // within the bytes written: allowed
  EXPECT_EQ(out.size(), data.size());
  EXPECT_EQ(names_in(root).size(), 1u) << "only the hidden temporary before the close";
  EXPECT_NE(names_in(root).front(), "w.bin");
  out.close();
  auto want = data;
  std::copy(patch.begin(), patch.end(), want.begin() + 4000);
  EXPECT_EQ(bytes_of(root + "/w.bin"), want);
  EXPECT_EQ(names_in(root), std::vector<std::string>{"w.bin"});

  RemoteFile in = RemoteFile::open_read(security(), url("w.bin"));
  EXPECT_EQ(in.size(), want.size());
  std::vector<std::uint8_t> got(want.size() + 100);
  EXPECT_EQ(in.read_at(0, got), want.size()) << "short only at the end of the file";
  got.resize(want.size());
  EXPECT_EQ(got, want);
  std::vector<std::uint8_t> tail(64);
  EXPECT_EQ(in.read_at(want.size() - 10, tail), 10u);
  EXPECT_EQ(in.read_at(want.size() + 5, tail), 0u);
  in.close();
  EXPECT_NE(server.log().find("streamed write committed, bytes=" + std::to_string(want.size())), std::string::npos);
}

TEST_F(StreamIo, AGapAnExistingNameAndAMissingFileAreRefused) {
  RemoteFile out = RemoteFile::open_write(security(), url("gap.bin"), {});
  const auto data = random_bytes(100, 2);
  out.write_at(0, data);
  try {
    out.write_at(101, data);
    ADD_FAILURE() << "a write past the end was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::usage) << e.what();
    EXPECT_NE(std::string(e.what()).find("gap"), std::string::npos) << e.what();
  }
  out.write_at(100, data);  // the session goes on
  out.close();
  EXPECT_EQ(file_size(root + "/gap.bin"), 200u);

  try {
    RemoteFile::open_write(security(), url("gap.bin"), {});
    ADD_FAILURE() << "an existing file was opened for writing without overwrite";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::exists) << e.what();
  }
  RemoteFile again = RemoteFile::open_write(security(), url("gap.bin"), {.overwrite = true});
  again.write_at(0, data);
  EXPECT_EQ(file_size(root + "/gap.bin"), 200u) << "replaced only at the close";
  again.close();
  EXPECT_EQ(file_size(root + "/gap.bin"), 100u);

  try {
    RemoteFile::open_read(security(), url("none.bin"));
    ADD_FAILURE() << "a missing file opened";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::not_found) << e.what();
  }
}

TEST_F(StreamIo, AWriteNeverClosedLeavesNothingBehind) {
  {
    RemoteFile out = RemoteFile::open_write(security(), url("lost.bin"), {});
    out.write_at(0, random_bytes(100000, 3));
  }  // the connection goes without STREAM_CLOSE
  for (int i = 0; i < 100 && !names_in(root).empty(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_TRUE(names_in(root).empty()) << names_in(root).front();
  EXPECT_NE(server.log().find("streamed write abandoned"), std::string::npos);
}

}  // namespace
}  // namespace pxfer::e2e
