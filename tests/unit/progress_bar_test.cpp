// The terminal progress bar: what it shows and that it never wraps the line.
#include <gtest/gtest.h>

#include "pxfer/progress_bar.hpp"

using namespace pxfer;

TEST(ProgressBar, ShowsPercentBytesRateAndTimeLeft) {
  BarState s{"run42.root", 512ull << 20, 1ull << 30, 256e6, 0, 0};
  std::string line = format_progress_bar(s, 100);
  EXPECT_NE(line.find("run42.root ["), std::string::npos) << line;
  EXPECT_NE(line.find(" 50.0%"), std::string::npos) << line;
  EXPECT_NE(line.find("512.0 MiB / 1.00 GiB"), std::string::npos) << line;
  EXPECT_NE(line.find("256.0 MB/s"), std::string::npos) << line;
  EXPECT_NE(line.find("ETA 0:03"), std::string::npos) << line;  // 512 MiB at 256 MB/s: 2.1 s, rounded up
  EXPECT_NE(line.find("=>"), std::string::npos) << line;
  EXPECT_EQ(line.find('\n'), std::string::npos);
}

TEST(ProgressBar, NeverLongerThanTheTerminalLessOne) {
  BarState s{std::string(200, 'x') + ".dat", 1, 3, 1, 0, 0};
  for (unsigned width : {20u, 40u, 60u, 80u, 132u, 300u}) {
    std::string line = format_progress_bar(s, width);
    EXPECT_LE(line.size(), width - 1) << width;
  }
  EXPECT_NE(format_progress_bar(s, 80).find("...x"), std::string::npos) << "long names shortened from the left";
}

TEST(ProgressBar, BatchShowsFilesDoneOfTotal) {
  BarState s;
  s.bytes = 100 << 20;
  s.total = 400 << 20;
  s.rate_Bps = 50e6;
  s.files_done = 3;
  s.files_total = 40;
  std::string line = format_progress_bar(s, 100);
  EXPECT_EQ(line.rfind("files 3/40 [", 0), 0u) << line;
  EXPECT_NE(line.find(" 25.0%"), std::string::npos) << line;
  s.total = 0;  // sizes unknown: the share of files done, no time left
  line = format_progress_bar(s, 100);
  EXPECT_NE(line.find("  7.5%"), std::string::npos) << line;
  EXPECT_NE(line.find("ETA --:--"), std::string::npos) << line;
}

TEST(ProgressBar, EtaFormats) {
  EXPECT_EQ(format_eta(0), "0:00");
  EXPECT_EQ(format_eta(41.2), "0:42");
  EXPECT_EQ(format_eta(725), "12:05");
  EXPECT_EQ(format_eta(3 * 3600 + 130), "3:02:10");
  EXPECT_EQ(format_eta(-1), "--:--");
  EXPECT_EQ(format_eta(1e9), "--:--");
}
