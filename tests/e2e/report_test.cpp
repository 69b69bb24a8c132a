// Issue 15, "Show it": `--report FILE.html` and `pxfer report` make one self-contained page that a
// real browser renders; on a terminal the progress is a bar, elsewhere the gridftp lines stay.
#include <gtest/gtest.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <regex>
#include <set>
#include <string>

#include "support/e2e.hpp"
#include "support/png.hpp"

namespace pxfer::e2e {
namespace {
namespace fs = std::filesystem;

std::string chromium_binary() {
  for (const char* p : {"/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"})
    if (::access(p, X_OK) == 0) return p;
  return "";
}

// Renders `html` in headless Chromium at 1280 x 2000 and returns the screenshot's path ("" and a
// failure recorded when Chromium fails).
std::string screenshot(const std::string& chromium, const TempDir& dir, const std::string& html) {
  const std::string png = dir / "shot.png";
  auto child = ChildProcess::piped({chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                                    "--user-data-dir=" + dir.subdir("chromium-profile"), "--screenshot=" + png,
                                    "--window-size=1280,2000", "file://" + html});
  bool timed_out = false;
  const int status = child.wait(120s, &timed_out);
  EXPECT_FALSE(timed_out);
  EXPECT_EQ(status, 0) << child.err();
  if (!path_exists(png)) ADD_FAILURE() << "no screenshot: " << child.err();
  return path_exists(png) ? png : "";
}

void expect_rendered_page(const std::string& png) {
  std::string why;
  auto img = read_png(png, &why);
  ASSERT_TRUE(img) << why;
  EXPECT_EQ(img->width, 1280u);
  EXPECT_EQ(img->height, 2000u);
  ASSERT_FALSE(img->pixels.empty()) << "a PNG format this check cannot decode";
  std::set<std::uint32_t> colours;
  std::size_t ink = 0;
  for (auto p : img->pixels) {
    colours.insert(p);
    ink += p != 0xffffff;
  }
  // A blank page is one colour; text, axes and the Okabe-Ito series give hundreds.
  EXPECT_GT(colours.size(), 50u);
  EXPECT_GT(ink, img->pixels.size() / 50) << "under 2% of the page is drawn";
  EXPECT_GT(fs::file_size(png), 20'000u);
}

using Report = DirsTest;

TEST_F(Report, PutWithReportWritesAPageThatChromiumRenders) {
  std::string src = dir / "src.dat", page = dir / "run.html";
  make_file(src, 96 * MiB, 15);
  ServerProcess server = serve();
  RunResult r = run_pxfer("put", "-p", "4", "--perf-interval", "0.05", "--report", page, src, server.url("dst.dat"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(files_equal(src, root + "/dst.dat"));
  EXPECT_FALSE(rate_line_bytes(r.out).empty()) << "not a terminal: the gridftp lines, as before\n" << r.out;
  EXPECT_EQ(r.out.find("  stream "), std::string::npos) << "per-stream lines only with --stream-stats\n" << r.out;
  EXPECT_NE(r.err.find("report written to " + page), std::string::npos) << r.err;
  ASSERT_TRUE(path_exists(page));
  const std::string html = read_text(page);
  EXPECT_NE(html.find("100663296 bytes"), std::string::npos);
  EXPECT_NE(html.find("put -p 4 -w 0"), std::string::npos) << "labelled from its options";
  EXPECT_NE(html.find("Rate per stream, stacked"), std::string::npos) << "--report records every stream";
  EXPECT_NE(html.find("Send-Q per stream"), std::string::npos);
  EXPECT_NE(html.find("pxfer version</th><td>0."), std::string::npos);
  const std::string chromium = chromium_binary();
  if (chromium.empty()) GTEST_SKIP() << "chromium is not installed (tools/deps.sh installs it): the page was not rendered";
  const std::string png = screenshot(chromium, dir, page);
  if (!png.empty()) expect_rendered_page(png);
  if (const char* keep = std::getenv("PXFER_KEEP_SCREENSHOT")) fs::copy_file(png, keep, fs::copy_options::overwrite_existing);
}

TEST_F(Report, CommandOverlaysSavedJsonRunsLabelledByWindow) {
  std::string src = dir / "src.dat";
  make_file(src, 64 * MiB, 16);
  ServerProcess server = serve();
  RunResult small = run_pxfer("put", "--json", "-w", "87380", "--perf-interval", "0.05", src, server.url("a.dat"));
  ASSERT_EQ(small.exit_code, 0) << small.err;
  RunResult big = run_pxfer("get", "--json", "-w", "1M", "--perf-interval", "0.05", server.url("a.dat"), dir / "back.dat");
  ASSERT_EQ(big.exit_code, 0) << big.err;
  write_text(dir / "small.ndjson", small.out);
  write_text(dir / "big.ndjson", big.out);
  RunResult r = run_pxfer("report", dir / "small.ndjson", dir / "big.ndjson", "-o", dir / "both.html");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  const std::string html = read_text(dir / "both.html");
  EXPECT_NE(html.find("put -p 4 -w 87380 avg"), std::string::npos);
  EXPECT_NE(html.find("get -p 4 -w 1M avg"), std::string::npos);
  EXPECT_NE(html.find("67108864 bytes"), std::string::npos);
  EXPECT_NE(html.find("pxfer version</th><td>0."), std::string::npos) << "the summaries say it";
}

TEST_F(Report, SweepReportIsAHeatmapWithTheTablesNumbers) {
  ServerProcess server = serve();
  fs::create_directories(root + "/sweep");
  RunResult r = run_pxfer("sweep", "--streams", "1,2", "--files", "1,2", "--size", "4M", "--json", "--report",
                          dir / "sweep.html", server.url("sweep/"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string html = read_text(dir / "sweep.html");
  EXPECT_NE(html.find("Files x streams"), std::string::npos);
  EXPECT_NE(html.find("files at once"), std::string::npos);
  // Every cell's median, as the JSON says it, is printed in the heatmap ("%.1f").
  std::size_t cells = 0;
  for (const auto& line : split_lines(r.out)) {
    auto cell = nlohmann::json::parse(line);
    char expected[32];
    std::snprintf(expected, sizeof expected, ">%.1f<", cell["median_mbit"].get<double>());
    EXPECT_NE(html.find(expected), std::string::npos) << expected;
    ++cells;
  }
  EXPECT_EQ(cells, 4u) << r.out;
}

TEST_F(Report, BatchReportMarksEveryFile) {
  std::string tree = dir.subdir("tree");
  for (int i = 0; i < 6; ++i) make_file(tree + "/f" + std::to_string(i) + ".dat", 2 * MiB, 20 + static_cast<unsigned>(i));
  ServerProcess server = serve();
  RunResult r = run_pxfer("put", "-r", "-c", "2", "--perf-interval", "0.05", "--report", dir / "batch.html", tree,
                          server.url(""));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("6 files: 6 done"), std::string::npos) << r.out;
  const std::string html = read_text(dir / "batch.html");
  EXPECT_NE(html.find("Files over time"), std::string::npos);
  EXPECT_NE(html.find("6 planned: 6 done, 0 skipped, 0 failed"), std::string::npos);
  EXPECT_NE(html.find("put -r -p auto -w 0 -c 2"), std::string::npos) << "-p auto is the default";
}

TEST_F(Report, DoctorJsonRendersAPathSection) {
  ServerProcess server = serve();
  RunResult doctor = run_pxfer("doctor", "--json", "--target", "1gbit", server.url(""));
  ASSERT_EQ(doctor.exit_code, 0) << doctor.err;
  auto j = nlohmann::json::parse(doctor.out);
  EXPECT_EQ(j["event"], "doctor");
  write_text(dir / "doctor.ndjson", doctor.out);
  RunResult r = run_pxfer("report", dir / "doctor.ndjson", "-o", dir / "doctor.html");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string html = read_text(dir / "doctor.html");
  EXPECT_NE(html.find("path check (doctor)"), std::string::npos);
  EXPECT_NE(html.find("1.00 Gbit/s"), std::string::npos) << "the target";
  EXPECT_NE(html.find("streams for the target: " + std::to_string(j["put"]["streams_needed"].get<unsigned>())),
            std::string::npos);
}

TEST_F(Report, BadInputIsOneLineAndAnExitCode) {
  write_text(dir / "bad.ndjson", "{\"event\":\"start\",\"bytes\":1}\nthis is not json\n");
  RunResult bad = run_pxfer("report", dir / "bad.ndjson", "-o", dir / "out.html");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_EQ(bad.err, "pxfer: " + (dir / "bad.ndjson") + ":2: not JSON; give the NDJSON that pxfer put|get|sweep --json wrote\n");
  EXPECT_FALSE(path_exists(dir / "out.html"));
  RunResult missing = run_pxfer("report", dir / "nothing.ndjson", "-o", dir / "out.html");
  EXPECT_EQ(missing.exit_code, 3) << missing.err;
  EXPECT_EQ(std::count(missing.err.begin(), missing.err.end(), '\n'), 1) << missing.err;
  RunResult no_dir = run_pxfer("report", dir / "bad.ndjson", "-o", dir / "no/such/dir/out.html");
  EXPECT_EQ(no_dir.exit_code, 2) << no_dir.err;
  EXPECT_NE(no_dir.err.find("no directory"), std::string::npos) << no_dir.err;
}

// Runs `command` in a pseudo-terminal (util-linux script) and returns what the terminal showed.
RunResult in_terminal(const std::string& command) {
  auto child = ChildProcess::piped({"/usr/bin/script", "-q", "-e", "-c", command, "/dev/null"});
  RunResult r;
  r.exit_code = child.wait(120s, &r.timed_out);
  r.out = child.out();
  r.err = child.err();
  return r;
}

using Progress = DirsTest;

TEST_F(Progress, BarOnATerminalRateLinesWhenAskedOrPiped) {
  if (::access("/usr/bin/script", X_OK) != 0) GTEST_SKIP() << "no /usr/bin/script (util-linux) to make a terminal";
  std::string src = dir / "src.dat";
  make_file(src, 64 * MiB, 17);
  ServerProcess server = serve();
  const std::string base = binary_path("pxfer") + " put --overwrite -p 2 --perf-interval 0.05 " + src + " " + server.url("t.dat");
  RunResult bar = in_terminal("COLUMNS=100 " + base);
  ASSERT_EQ(bar.exit_code, 0) << bar.out << bar.err;
  EXPECT_NE(bar.out.find("\rt.dat ["), std::string::npos) << bar.out;
  EXPECT_NE(bar.out.find("100.0%"), std::string::npos) << bar.out;
  EXPECT_NE(bar.out.find("ETA "), std::string::npos);
  EXPECT_EQ(bar.out.find("KB/sec avg"), std::string::npos) << "no rate lines under the bar";
  // Issue 37: at 60 columns the bar keeps the rate and a whole ETA, and nothing it or the summary
  // prints is wider than the terminal.
  RunResult narrow = in_terminal("COLUMNS=60 " + base);
  ASSERT_EQ(narrow.exit_code, 0) << narrow.out << narrow.err;
  EXPECT_TRUE(std::regex_search(narrow.out, std::regex("MB/s  ETA [0-9-]+:[0-9-]{2}"))) << narrow.out;
  std::size_t widest = 0, start = 0;  // the Source:/Dest: lines are paths, left whole
  for (std::size_t i = 0; i <= narrow.out.size(); ++i)
    if (i == narrow.out.size() || narrow.out[i] == '\r' || narrow.out[i] == '\n') {
      const std::string line = narrow.out.substr(start, i - start);
      if (!line.starts_with("Source:") && !line.starts_with("Dest:")) widest = std::max(widest, line.size());
      start = i + 1;
    }
  EXPECT_LE(widest, 59u) << narrow.out;
  RunResult lines = in_terminal(base + " --rate-lines");
  ASSERT_EQ(lines.exit_code, 0) << lines.out;
  EXPECT_NE(lines.out.find("KB/sec avg"), std::string::npos) << lines.out;
  EXPECT_EQ(lines.out.find("ETA "), std::string::npos);
}

}  // namespace
}  // namespace pxfer::e2e
