// pxferd's accounting line: stable logfmt keys, values quoted and escaped so none ends a line.
#include <gtest/gtest.h>

#include "server/accounting.hpp"

namespace pxfer::server {
namespace {

TEST(Accounting, PlainValuesStayBareOthersAreQuotedAndEscaped) {
  EXPECT_EQ(logfmt_value("atlas/run42.root"), "atlas/run42.root");
  EXPECT_EQ(logfmt_value(""), "\"\"");
  EXPECT_EQ(logfmt_value("a b"), "\"a b\"");
  EXPECT_EQ(logfmt_value("a\"b\\c"), "\"a\\\"b\\\\c\"");
  EXPECT_EQ(logfmt_value("x\nresult=ok"), "\"x\\nresult=ok\"");
  EXPECT_EQ(logfmt_value(std::string("a\x01") + "b"), "\"a\\x01b\"");
}

TEST(Accounting, OneLineWithEveryKeyInOrder) {
  TransferAccount a;
  a.id = "0a1b2c3d";
  a.client = "127.0.0.1:5000";
  a.identity = "alice";
  a.agent = "pxfer/0.2.0";
  a.path = "dir/f.bin";
  a.direction = "put";
  a.bytes = 42;
  a.streams = 4;
  a.seconds = 1.5;
  a.rate_mbps = 0.1;
  a.checksum_algo = "adler32";
  a.checksum = "0badf00d";
  a.result = "ok";
  EXPECT_EQ(logfmt_line(a),
            "transfer=0a1b2c3d client=127.0.0.1:5000 identity=alice agent=pxfer/0.2.0 path=dir/f.bin direction=put "
            "bytes=42 resumed=0 recovered_streams=0 seconds=1.500 streams=4 rate=0.1MB/s checksum_algo=adler32 "
            "checksum=0badf00d result=ok");
  a.result = "failed";
  a.error_class = "network";
  a.error = "connection lost";
  EXPECT_TRUE(logfmt_line(a).ends_with("result=failed error_class=network error=\"connection lost\""));
  EXPECT_EQ(logfmt_line(a).find('\n'), std::string::npos);
}

}  // namespace
}  // namespace pxfer::server
