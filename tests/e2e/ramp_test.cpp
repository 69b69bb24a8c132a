// --ramp-up: files start one after another along the ramp, not all at once.
#include <gtest/gtest.h>

#include <regex>

#include "support/e2e.hpp"

namespace pxfer::e2e {
namespace {

struct FileSpan {
  double start = 0, seconds = 0;
};

// From the per-file lines: "done PATH N bytes S s R MB/s adler32: X (started +T s)".
std::vector<FileSpan> file_spans(const std::string& out) {
  std::vector<FileSpan> spans;
  std::regex line(R"(done \S+ \d+ bytes ([0-9.]+) s .*\(started \+([0-9.]+) s\))");
  for (auto it = std::sregex_iterator(out.begin(), out.end(), line); it != std::sregex_iterator(); ++it)
    spans.push_back({std::stod((*it)[2]), std::stod((*it)[1])});
  std::sort(spans.begin(), spans.end(), [](const FileSpan& a, const FileSpan& b) { return a.start < b.start; });
  return spans;
}

std::vector<double> start_times(const std::string& out) {
  std::vector<double> starts;
  for (const auto& s : file_spans(out)) starts.push_back(s.start);
  return starts;
}

class RampUp : public DirsTest {
 protected:
  RampUp() : DirsTest(big_file_base()) {}
};

TEST_F(RampUp, FilesInFlightNeverExceedTheRamp) {
  std::string tree = dir.subdir("tree");
  const int files = 16;
  for (int i = 0; i < files; ++i)
    make_file(tree + "/f" + std::to_string(i) + ".dat", 24u << 20, static_cast<std::uint64_t>(i));
  ServerProcess server = serve();
  // -c 4 over 1.5 s: at most 1 file in flight before 0.5 s, 2 before 1.0 s, 3 before 1.5 s.
  auto r = run_pxfer("put", "-r", "-c", "4", "-p", "1", "--ramp-up", "1.5s", tree, server.url("dest/"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto spans = file_spans(r.out);
  ASSERT_EQ(spans.size(), static_cast<std::size_t>(files)) << r.out;
  EXPECT_LT(spans.front().start, 0.2) << r.out;
  // Check at every start instant how many files are in flight (a little slack for the
  // rounding of the printed times).
  for (const auto& at : spans) {
    int in_flight = 0;
    for (const auto& other : spans)
      if (other.start <= at.start + 1e-9 && at.start + 0.015 < other.start + other.seconds) ++in_flight;
    int allowed = 1 + static_cast<int>((at.start + 0.015) / 0.5);
    EXPECT_LE(in_flight, std::min(allowed, 4)) << "at +" << at.start << " s\n" << r.out;
  }
  for (int i = 0; i < files; ++i)
    EXPECT_TRUE(files_equal(tree + "/f" + std::to_string(i) + ".dat", root + "/dest/tree/f" + std::to_string(i) + ".dat"));
}

TEST_F(RampUp, WithoutARampAllFilesStartTogether) {
  std::string tree = dir.subdir("tree");
  for (int i = 0; i < 4; ++i) make_file(tree + "/f" + std::to_string(i) + ".dat", 1 << 20, static_cast<std::uint64_t>(i));
  ServerProcess server = serve();
  auto r = run_pxfer("put", "-r", "-c", "4", tree, server.url("dest/"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto starts = start_times(r.out);
  ASSERT_EQ(starts.size(), 4u) << r.out;
  EXPECT_LT(starts.back(), 0.4) << r.out;
}

TEST_F(RampUp, BadDurationIsAUsageError) {
  auto r = run_pxfer("put", "-r", "--ramp-up", "soon", dir.path(), "pxfer://127.0.0.1:1/x/");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--ramp-up soon"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace pxfer::e2e
