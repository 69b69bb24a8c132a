// put then get through a real pxferd, over the sizes where block arithmetic goes wrong (empty,
// one byte, around one block, many blocks plus a tail) and 1, 2 and 8 streams.
#include <gtest/gtest.h>

#include <regex>

#include "support/e2e.hpp"

namespace pxfer::e2e {
namespace {

struct SizeCase {
  const char* name;
  std::uint64_t size;
  const char* block_size;  // --block-size, or nullptr for the default (4M)
};

// What every successful transfer prints on stdout; returns the printed adler32.
std::string check_success(const RunResult& r, std::uint64_t size, const std::string& source,
                          const std::string& dest) {
  EXPECT_EQ(r.exit_code, 0) << "stderr: " << r.err;
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(line_starting_with(r.out, "Source:").value_or("<none>"), "Source: " + source) << r.out;
  EXPECT_EQ(line_starting_with(r.out, "Dest:").value_or("<none>"), "Dest:   " + dest) << r.out;
  auto rates = rate_line_bytes(r.out);
  EXPECT_FALSE(rates.empty()) << "no rate line in:\n" << r.out;
  if (!rates.empty()) {
    EXPECT_EQ(rates.back(), size) << "the final rate line must count every byte:\n" << r.out;
  }
  EXPECT_TRUE(line_starting_with(r.out, std::to_string(size) + " bytes in ")) << "no summary line in:\n" << r.out;
  auto sum = printed_checksum(r.out, "adler32");
  EXPECT_TRUE(sum) << "no adler32 line in:\n" << r.out;
  if (!sum) return {};
  EXPECT_TRUE(std::regex_match(*sum, std::regex("[0-9a-f]{8}"))) << "adler32: " << *sum;
  return *sum;
}

class TransferSizes : public DirsTest, public ::testing::WithParamInterface<std::tuple<SizeCase, int>> {
 protected:
  TransferSizes() : DirsTest(big_file_base()) {}
};

TEST_P(TransferSizes, PutThenGetIsByteExact) {
  const auto& [c, streams] = GetParam();
  ServerProcess server = serve();
  std::string src = local + "/src.bin";
  make_file(src, c.size, c.size * 31 + static_cast<std::uint64_t>(streams));

  std::vector<std::string> common{"-p", std::to_string(streams)};
  if (c.block_size) common.insert(common.end(), {"--block-size", c.block_size});

  std::vector<std::string> put{"put", src, server.url("dst.bin")};
  put.insert(put.end(), common.begin(), common.end());
  RunResult p = run_pxfer_args(put);
  std::string put_sum = check_success(p, c.size, src, server.url("dst.bin"));
  EXPECT_TRUE(files_equal(src, root + "/dst.bin"));

  std::string back = local + "/back.bin";
  std::vector<std::string> get{"get", server.url("dst.bin"), back};
  get.insert(get.end(), common.begin(), common.end());
  RunResult g = run_pxfer_args(get);
  std::string get_sum = check_success(g, c.size, server.url("dst.bin"), back);
  EXPECT_TRUE(files_equal(src, back));

  EXPECT_EQ(put_sum, get_sum);
  EXPECT_EQ(put_sum, adler32_hex(src)) << "the printed adler32 is not the file's";
  EXPECT_EQ(hidden_temporaries(root), std::vector<std::string>{});
  EXPECT_EQ(hidden_temporaries(local), std::vector<std::string>{});
}

const SizeCase size_cases[] = {
    {"empty", 0, "1M"},
    {"one_byte", 1, "1M"},
    {"block_minus_1", MiB - 1, "1M"},
    {"block", MiB, "1M"},
    {"block_plus_1", MiB + 1, "1M"},
    {"100MiB_plus_12345", 100 * MiB + 12345, nullptr},
};

INSTANTIATE_TEST_SUITE_P(SizesAndStreams, TransferSizes,
                         ::testing::Combine(::testing::ValuesIn(size_cases), ::testing::Values(1, 2, 8)),
                         [](const ::testing::TestParamInfo<TransferSizes::ParamType>& param_info) {
                           return std::string(std::get<0>(param_info.param).name) + "_p" +
                                  std::to_string(std::get<1>(param_info.param));
                         });

class TransferChecksum : public DirsTest {
 protected:
  TransferChecksum() : DirsTest(big_file_base()) {}
};

TEST_F(TransferChecksum, Sha256IsPrintedAndCorrect) {
  ServerProcess server = serve();
  std::string src = local + "/src.bin", back = local + "/back.bin";
  make_file(src, 5 * MiB + 777, 42);
  const std::string expected = sha256_hex(src);

  RunResult p = run_pxfer("put", src, server.url("s.bin"), "--checksum", "sha256", "-p", "4", "--block-size", "1M");
  ASSERT_EQ(p.exit_code, 0) << p.err;
  EXPECT_EQ(p.err, "");
  auto put_sum = printed_checksum(p.out, "sha256");
  ASSERT_TRUE(put_sum) << p.out;
  EXPECT_TRUE(std::regex_match(*put_sum, std::regex("[0-9a-f]{64}"))) << *put_sum;
  EXPECT_EQ(*put_sum, expected);
  EXPECT_TRUE(files_equal(src, root + "/s.bin"));

  RunResult g = run_pxfer("get", server.url("s.bin"), back, "--checksum", "sha256", "-p", "4");
  ASSERT_EQ(g.exit_code, 0) << g.err;
  EXPECT_EQ(printed_checksum(g.out, "sha256").value_or(""), expected);
  EXPECT_TRUE(files_equal(src, back));
  EXPECT_EQ(hidden_temporaries(root), std::vector<std::string>{});
  EXPECT_EQ(hidden_temporaries(local), std::vector<std::string>{});
}

TEST_F(TransferChecksum, NoneStillTransfersExactly) {
  ServerProcess server = serve();
  std::string src = local + "/src.bin", back = local + "/back.bin";
  make_file(src, 3 * MiB + 5, 7);

  RunResult p = run_pxfer("put", src, server.url("n.bin"), "--checksum", "none", "-p", "2", "--block-size", "1M");
  ASSERT_EQ(p.exit_code, 0) << p.err;
  EXPECT_TRUE(line_starting_with(p.out, "checksum: none")) << p.out;
  EXPECT_FALSE(printed_checksum(p.out, "adler32")) << p.out;
  EXPECT_FALSE(printed_checksum(p.out, "sha256")) << p.out;
  EXPECT_TRUE(files_equal(src, root + "/n.bin"));

  RunResult g = run_pxfer("get", server.url("n.bin"), back, "--checksum", "none", "-p", "2");
  ASSERT_EQ(g.exit_code, 0) << g.err;
  EXPECT_TRUE(line_starting_with(g.out, "checksum: none")) << g.out;
  EXPECT_TRUE(files_equal(src, back));
}

}  // namespace
}  // namespace pxfer::e2e
