// The resume journal on its own: what survives a reopen, what resets it, its lock, and the
// removal of abandoned partial files by age.
#include "io/resume_journal.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "pxfer/common/error.hpp"

namespace pxfer {
namespace {

namespace fs = std::filesystem;

struct JournalDir : ::testing::Test {
  fs::path dir;
  int fd = -1;
  void SetUp() override {
    char templ[] = "/tmp/pxfer-journal-test.XXXXXX";
    dir = ::mkdtemp(templ);
    fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  }
  void TearDown() override {
    ::close(fd);
    fs::remove_all(dir);
  }
  void make_old(const std::string& name) {
    struct timespec times[2] = {{0, UTIME_OMIT}, {1000, 0}};  // mtime in 1970
    ASSERT_EQ(::utimensat(fd, name.c_str(), times, 0), 0);
  }
};

const ResumeIdentity identity{10u << 20, 1u << 20, 123456789};

TEST_F(JournalDir, RecordsSurviveAReopenWithTheSameIdentity) {
  {
    ResumeJournal j(fd, ".f.pxfer-journal", identity, "f");
    EXPECT_FALSE(j.matched());
    j.record(0, 0xdeadbeef);
    j.record(7, 42);
  }
  ResumeJournal again(fd, ".f.pxfer-journal", identity, "f");
  EXPECT_TRUE(again.matched());
  EXPECT_EQ(again.recorded_count(), 2u);
  EXPECT_EQ(again.recorded(0), 0xdeadbeefu);
  EXPECT_EQ(again.recorded(7), 42u);
  EXPECT_EQ(again.recorded(3), std::nullopt);
  again.forget(7);
  EXPECT_EQ(again.recorded(7), std::nullopt);
}

TEST_F(JournalDir, AnotherSourceOrBlockSizeStartsOver) {
  {
    ResumeJournal j(fd, ".f.pxfer-journal", identity, "f");
    j.record(1, 5);
  }
  for (ResumeIdentity other : {ResumeIdentity{identity.size, identity.block_size, identity.source_mtime_ns + 1},
                               ResumeIdentity{identity.size + 1, identity.block_size, identity.source_mtime_ns},
                               ResumeIdentity{identity.size, identity.block_size * 2, identity.source_mtime_ns}}) {
    ResumeJournal j(fd, ".f.pxfer-journal", other, "f");
    EXPECT_FALSE(j.matched());
    EXPECT_EQ(j.recorded_count(), 0u);
  }
}

TEST_F(JournalDir, ADamagedHeaderStartsOver) {
  {
    ResumeJournal j(fd, ".f.pxfer-journal", identity, "f");
    j.record(1, 5);
  }
  std::fstream f(dir / ".f.pxfer-journal", std::ios::in | std::ios::out | std::ios::binary);
  f.seekp(10);
  f.put('\x7f');
  f.close();
  ResumeJournal j(fd, ".f.pxfer-journal", identity, "f");
  EXPECT_FALSE(j.matched());
  EXPECT_EQ(j.recorded_count(), 0u);
}

TEST_F(JournalDir, ASecondReceiverIsRefusedWhileTheFirstHoldsIt) {
  ResumeJournal first(fd, ".f.pxfer-journal", identity, "f");
  try {
    ResumeJournal second(fd, ".f.pxfer-journal", identity, "f");
    FAIL() << "two receivers shared one journal";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::exists);
    EXPECT_NE(std::string(e.what()).find("another transfer is writing"), std::string::npos) << e.what();
  }
}

TEST_F(JournalDir, StalePartialsGoUnlessYoungOrHeld) {
  for (const char* n : {".old.pxfer-part", ".young.pxfer-part"}) std::ofstream(dir / n) << "x";
  { ResumeJournal j(fd, ".old.pxfer-journal", identity, "old"); }
  { ResumeJournal j(fd, ".young.pxfer-journal", identity, "young"); }
  make_old(".old.pxfer-journal");
  {
    ResumeJournal held(fd, ".held.pxfer-journal", identity, "held");
    make_old(".held.pxfer-journal");
    EXPECT_EQ(remove_stale_partials(fd, 3600), 1u);
  }
  EXPECT_FALSE(fs::exists(dir / ".old.pxfer-part"));
  EXPECT_FALSE(fs::exists(dir / ".old.pxfer-journal"));
  EXPECT_TRUE(fs::exists(dir / ".young.pxfer-part"));
  EXPECT_TRUE(fs::exists(dir / ".held.pxfer-journal")) << "a journal in use was removed";
}

}  // namespace
}  // namespace pxfer
