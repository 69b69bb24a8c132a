// Issue 36: streamed I/O through the client library (pxfer::RemoteFile, the gfal2 plugin's open,
// read, write, pread, pwrite, close) against a real pxferd: a write is a hidden temporary until its
// close, bytes come back as written across chunk boundaries, a gap and an existing name are
// refused, and a write never closed leaves nothing behind.
#include <gtest/gtest.h>

#include <dirent.h>
#include <signal.h>

#include <filesystem>
#include <random>
#include <thread>

#include "client/request_link.hpp"
#include "pxfer/common/error.hpp"
#include "pxfer/core/limits.hpp"
#include "pxfer/client/stream_io.hpp"
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

class StreamIo : public ServedTest {
 protected:
  ClientSecurity security() const { return ClientSecurity{"", server.fingerprint(), "/dev/null", "", "", ""}; }
  Url url(const std::string& path) const { return parsed_url(server, path); }
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

// One session holds at most limits::stream_handles_per_session files: the next open is refused
// (and the session goes on), a close makes room again; the writes all go with the session.
TEST_F(StreamIo, HandlesPerSessionAreBoundedAndGoWithTheSession) {
  {
    RequestLink link(security(), std::chrono::seconds(5));
    std::vector<std::uint32_t> handles;
    auto open = [&](const std::string& name) {
      return link.ask<wire::StreamOpenOk>(url(name), wire::StreamOpen{wire::StreamMode::write, 0, name}).handle;
    };
    for (std::uint32_t i = 0; i < limits::stream_handles_per_session; ++i) handles.push_back(open("h" + std::to_string(i)));
    try {
      open("one-more");
      ADD_FAILURE() << "open number " << limits::stream_handles_per_session + 1 << " was accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Errc::usage) << e.what();
    }
    link.ask<wire::Done>(url(""), wire::StreamClose{handles.front()});
    EXPECT_NE(open("one-more"), 0u) << "a close makes room";
    EXPECT_EQ(names_in(root).size(), limits::stream_handles_per_session + 1) << "h0, and the temporaries of the others";
  }
  for (int i = 0; i < 100 && names_in(root).size() > 1; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(names_in(root), std::vector<std::string>{"h0"});
}

// Names leaving the export root (.., a symlink out of it) are refused for reading and writing, and
// nothing is written outside.
TEST_F(StreamIo, PathsStayBeneathTheExportRoot) {
  const std::string outside = dir.subdir("outside");
  make_file(outside + "/secret.bin", 100, 4);
  ASSERT_EQ(::symlink(outside.c_str(), (root + "/out").c_str()), 0);
  for (const std::string path : {"../outside/secret.bin", "out/secret.bin"}) {
    SCOPED_TRACE(path);
    RequestLink link(security(), std::chrono::seconds(5));
    for (auto mode : {wire::StreamMode::read, wire::StreamMode::write}) {
      const std::string name = mode == wire::StreamMode::read ? path : path + ".new";
      EXPECT_THROW(link.ask<wire::StreamOpenOk>(url(""), wire::StreamOpen{mode, 0, name}), Error);
    }
  }
  EXPECT_EQ(names_in(outside), std::vector<std::string>{"secret.bin"});
}

// A streamed write counts against --max-unfinished-per-identity as it grows, and gives the bytes
// back at its close; --max-file-size stops it. A refused write leaves the file as it was.
using StreamIoLimits = DirsTest;

TEST_F(StreamIoLimits, UnfinishedSpaceAndFileSizeHoldStreamedWrites) {
  ServerProcess server = serve({"--insecure-no-auth", "--max-unfinished-per-identity", "1000", "--max-file-size", "800"});
  const ClientSecurity security{"", server.fingerprint(), "/dev/null", "", "", ""};
  const auto bytes = random_bytes(600, 5);
  RemoteFile a = RemoteFile::open_write(security, parsed_url(server, "a.bin"), {});
  RemoteFile b = RemoteFile::open_write(security, parsed_url(server, "b.bin"), {});
  a.write_at(0, bytes);
  try {
    b.write_at(0, bytes);  // 1200 unfinished bytes
    ADD_FAILURE() << "a write past --max-unfinished-per-identity was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::local_io) << e.what();
    EXPECT_NE(std::string(e.what()).find("max-unfinished-per-identity"), std::string::npos) << e.what();
  }
  a.close();  // its 600 bytes are finished now
  b.write_at(0, bytes);
  try {
    b.write_at(600, std::span(bytes).first(300));  // 900 bytes
    ADD_FAILURE() << "a write past --max-file-size was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::usage) << e.what();
  }
  b.close();
  EXPECT_EQ(file_size(root + "/a.bin"), 600u);
  EXPECT_EQ(file_size(root + "/b.bin"), 600u);
}

// A reload that makes the identity read-only reaches a write it opened before: its next write and
// its close are refused, and nothing appears under the name (each request is authorized again).
TEST_F(StreamIoLimits, AReloadThatTakesWriteAccessStopsAnOpenWrite) {
  const std::string etc = dir.subdir("etc");
  const std::string tokens = etc + "/tokens", access = etc + "/access";
  const std::string token = create_token("alice", tokens);
  write_private(access, "alice / rw\n");
  ServerProcess server = serve({"--tokens", tokens, "--access", access});
  const ClientSecurity security{"", server.fingerprint(), "/dev/null", token, "", ""};
  RemoteFile out = RemoteFile::open_write(security, parsed_url(server, "w.bin"), {});
  out.write_at(0, random_bytes(100, 6));
  write_private(access, "alice / ro\n");
  ::kill(server.pid(), SIGHUP);
  for (int i = 0; i < 500 && server.log().find("reloaded:") == std::string::npos; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ASSERT_NE(server.log().find("reloaded:"), std::string::npos) << server.log();
  try {
    out.write_at(100, random_bytes(100, 7));
    ADD_FAILURE() << "a write after the reload took write access was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::permission) << e.what();
  }
  EXPECT_THROW(out.close(), Error);
  EXPECT_FALSE(std::filesystem::exists(root + "/w.bin"));
}

}  // namespace
}  // namespace pxfer::e2e
