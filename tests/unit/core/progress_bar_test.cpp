// The terminal progress bar: what it shows and that it never wraps the line.
#include <gtest/gtest.h>

#include "pxfer/core/progress_bar.hpp"

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
  BarState s{std::string(200, 'x').append(".dat"), 1, 3, 1, 0, 0};
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

// Issue 37: at 60 columns the line used to be cut mid-ETA ("ETA 0:"). Narrower terminals drop the
// name first, then the total, then the bytes; rate and ETA stay whole at every width shown here.
TEST(ProgressBar, NarrowTerminalsKeepRateAndEtaAndDropTheNameFirst) {
  BarState s{"run42-with-a-long-name.root", 512ull << 20, 1ull << 30, 256e6, 0, 0};
  for (unsigned width : {30u, 40u, 50u, 60u, 70u, 80u, 100u, 132u}) {
    const std::string line = format_progress_bar(s, width);
    EXPECT_LE(line.size(), width - 1) << width << ": " << line;
    EXPECT_NE(line.find("256.0 MB/s"), std::string::npos) << width << ": " << line;
    EXPECT_NE(line.find("ETA 0:03"), std::string::npos) << width << ": " << line;
  }
  const std::string at60 = format_progress_bar(s, 60);
  EXPECT_EQ(at60.find("run42"), std::string::npos) << "the name goes before anything else: " << at60;
  EXPECT_EQ(at60.rfind("[", 0), 0u) << "the bar stays at 60 columns: " << at60;
  EXPECT_NE(at60.find(" 50.0%"), std::string::npos) << at60;
  EXPECT_NE(format_progress_bar(s, 100).find("run42"), std::string::npos) << "wide enough: the name is shown";
  EXPECT_NE(format_progress_bar(s, 100).find("512.0 MiB / 1.00 GiB"), std::string::npos);
  const std::string at30 = format_progress_bar(s, 30);
  EXPECT_EQ(at30.find('['), std::string::npos) << "no room for a bar: figures only: " << at30;
}

TEST(ProgressBar, SummaryIsBrokenAfterCommasToFitTheWidth) {
  const std::string summary =
      "1073741824 bytes in 0.92 s, 1167.1 MB/s, 9.34 Gbit/s, 4 streams, block 4 MiB, buffers local auto (snd 4 MiB / rcv "
      "6 MiB), remote auto (snd 4 MiB / rcv 6 MiB), congestion cubic, 2 data stream failures recovered";
  for (unsigned width : {40u, 60u, 80u, 120u}) {
    const std::string fitted = fit_to_width(summary, width);
    std::string joined;
    std::size_t start = 0;
    while (start <= fitted.size()) {
      const std::size_t end = std::min(fitted.find('\n', start), fitted.size());
      const std::string line = fitted.substr(start, end - start);
      EXPECT_LE(line.size(), width - 1) << width << ": " << line;
      joined += (joined.empty() ? "" : " ") + line.substr(line.rfind("  ", 0) == 0 ? 2 : 0);
      start = end + 1;
    }
    EXPECT_EQ(joined, summary) << "nothing lost or reordered at " << width;
  }
  EXPECT_EQ(fit_to_width("short, list", 80), "short, list");
}
