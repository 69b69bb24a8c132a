// pxfer://HOST[:PORT]/PATH URLs and HOST:PORT endpoints: what is accepted, what each part becomes,
// and what is refused (with a reason).
#include <gtest/gtest.h>

#include <string>

#include "pxfer/common/url.hpp"

namespace pxfer {
namespace {

Url parse_ok(const std::string& text) {
  std::string why;
  auto url = parse_url(text, &why);
  EXPECT_TRUE(url) << text << ": " << why;
  return url.value_or(Url{});
}

// Refused, and the reason contains `reason`.
void expect_refused(const std::string& text, const std::string& reason) {
  std::string why;
  EXPECT_FALSE(parse_url(text, &why)) << text;
  EXPECT_NE(why.find(reason), std::string::npos) << text << ": \"" << why << "\" should mention \"" << reason << '"';
  EXPECT_FALSE(parse_url(text)) << text << " (without a reason)";
}

TEST(ParseUrl, HostAndPath) {
  Url u = parse_ok("pxfer://host/path");
  EXPECT_EQ(u.host, "host");
  EXPECT_EQ(u.port, default_port);
  EXPECT_EQ(u.port, 7521);
  EXPECT_EQ(u.path, "path");
  EXPECT_FALSE(u.trailing_slash);
}

TEST(ParseUrl, HostPortAndNestedPath) {
  Url u = parse_ok("pxfer://host:1234/a/b");
  EXPECT_EQ(u.host, "host");
  EXPECT_EQ(u.port, 1234);
  EXPECT_EQ(u.path, "a/b");
  EXPECT_FALSE(u.trailing_slash);
}

TEST(ParseUrl, BracketedIpv6) {
  Url u = parse_ok("pxfer://[::1]:7000/x");
  EXPECT_EQ(u.host, "::1");  // without brackets
  EXPECT_EQ(u.port, 7000);
  EXPECT_EQ(u.path, "x");
  Url v = parse_ok("pxfer://[2001:db8::17]/data/run");
  EXPECT_EQ(v.host, "2001:db8::17");
  EXPECT_EQ(v.port, default_port);
  EXPECT_EQ(v.path, "data/run");
}

TEST(ParseUrl, Ipv4AndNames) {
  Url u = parse_ok("pxfer://192.0.2.10:65535/f");
  EXPECT_EQ(u.host, "192.0.2.10");
  EXPECT_EQ(u.port, 65535);
  EXPECT_EQ(parse_ok("pxfer://dtn01.example.org:1/f").port, 1);
}

TEST(ParseUrl, TrailingSlashMeansIntoThisDirectory) {
  Url u = parse_ok("pxfer://host/incoming/");
  EXPECT_EQ(u.path, "incoming/");
  EXPECT_TRUE(u.trailing_slash);
  Url root = parse_ok("pxfer://host:7000/");
  EXPECT_EQ(root.path, "");
  EXPECT_TRUE(root.trailing_slash);
}

TEST(ParseUrl, DoubleSlashKeepsTheAbsolutePathForTheServerToRefuse) {
  Url u = parse_ok("pxfer://h//etc/passwd");
  EXPECT_EQ(u.host, "h");
  EXPECT_EQ(u.path, "/etc/passwd");
  EXPECT_FALSE(u.trailing_slash);
}

TEST(ParseUrl, MissingPathIsRefused) {
  expect_refused("pxfer://host", "missing path");
  expect_refused("pxfer://host:1234", "missing path");
  expect_refused("pxfer://[::1]:7000", "missing path");
  expect_refused("pxfer://", "missing path");
}

TEST(ParseUrl, BadPortIsRefused) {
  for (const char* text : {"pxfer://host:0/x", "pxfer://host:70000/x", "pxfer://host:65536/x", "pxfer://host:abc/x",
                           "pxfer://host:-1/x", "pxfer://host:+80/x", "pxfer://host:80a/x", "pxfer://host: 80/x",
                           "pxfer://host:99999999999999999999/x", "pxfer://[::1]:0/x", "pxfer://[::1]:70000/x"}) {
    expect_refused(text, "port must be a number from 1 to 65535");
  }
  expect_refused("pxfer://host:/x", "empty port");
  expect_refused("pxfer://[::1]:/x", "empty port");
}

TEST(ParseUrl, Ipv6WithoutBracketsIsRefused) {
  expect_refused("pxfer://::1/x", "brackets");
  expect_refused("pxfer://fe80::1:7000/x", "brackets");
  expect_refused("pxfer://2001:db8::17/x", "brackets");
}

TEST(ParseUrl, MalformedBracketsAreRefused) {
  expect_refused("pxfer://[::1/x", "missing ']'");
  expect_refused("pxfer://[::1]7000/x", "expected ':' after ']'");
  expect_refused("pxfer://[]:7000/x", "empty IPv6 address");
}

TEST(ParseUrl, EmptyOrInvalidHostIsRefused) {
  expect_refused("pxfer:///x", "empty host");
  expect_refused("pxfer://:7000/x", "empty host");
  expect_refused("pxfer://user@host/x", "invalid character in host");
  expect_refused("pxfer://ho st/x", "invalid character in host");
  expect_refused("pxfer://host?x/y", "invalid character in host");
  expect_refused("pxfer://host#x/y", "invalid character in host");
}

TEST(ParseUrl, OtherSchemesAreRefused) {
  for (const char* text : {"", "host/x", "/tmp/x", "http://host/x", "gsiftp://host/x", "file:///tmp/x",
                           "PXFER://host/x", "pxfer:/host/x", "pxfer:host/x", " pxfer://host/x"}) {
    expect_refused(text, "pxfer://");
  }
}

TEST(LooksLikeUrl, OnlyThePxferScheme) {
  EXPECT_TRUE(looks_like_url("pxfer://host/x"));
  EXPECT_TRUE(looks_like_url("pxfer://"));
  EXPECT_FALSE(looks_like_url("host:/x"));
  EXPECT_FALSE(looks_like_url("./pxfer://x"));
  EXPECT_FALSE(looks_like_url("gsiftp://host/x"));
}

TEST(UrlAuthority, BracketsIpv6Only) {
  EXPECT_EQ((Url{"::1", 7000, "x", false}).authority(), "[::1]:7000");
  EXPECT_EQ((Url{"2001:db8::17", 7521, "x", false}).authority(), "[2001:db8::17]:7521");
  EXPECT_EQ((Url{"host", 7521, "x", false}).authority(), "host:7521");
  EXPECT_EQ((Url{"192.0.2.10", 1, "", true}).authority(), "192.0.2.10:1");
}

TEST(UrlToString, ParsesBackToTheSameUrl) {
  for (const char* text : {"pxfer://host/path", "pxfer://host:1234/a/b", "pxfer://[::1]:7000/x", "pxfer://h/dir/",
                           "pxfer://h//etc/passwd"}) {
    Url u = parse_ok(text);
    Url back = parse_ok(u.to_string());
    EXPECT_EQ(back.host, u.host) << text;
    EXPECT_EQ(back.port, u.port) << text;
    EXPECT_EQ(back.path, u.path) << text;
    EXPECT_EQ(back.trailing_slash, u.trailing_slash) << text;
  }
  EXPECT_EQ(parse_ok("pxfer://[::1]:7000/x").to_string(), "pxfer://[::1]:7000/x");
  EXPECT_EQ(parse_ok("pxfer://host/x").to_string(), "pxfer://host:7521/x");  // the port is always spelled out
}

TEST(ParseEndpoint, HostPortForms) {
  struct Case {
    const char* text;
    const char* host;
    std::uint16_t port;
  };
  for (const Case& c : {
           Case{"0.0.0.0:7521", "0.0.0.0", 7521},
           Case{"127.0.0.1:0", "127.0.0.1", 0},  // port 0: the kernel picks one
           Case{"localhost:9000", "localhost", 9000},
           Case{":7000", "", 7000},             // all addresses
           Case{":0", "", 0},
           Case{"[::1]:7000", "::1", 7000},
           Case{"[::]:0", "::", 0},
           Case{"[::1]", "::1", default_port},
           Case{"dtn01", "dtn01", default_port},
           Case{"host:65535", "host", 65535},
       }) {
    std::string why;
    auto ep = parse_endpoint(c.text, &why);
    ASSERT_TRUE(ep) << c.text << ": " << why;
    EXPECT_EQ(ep->host, c.host) << c.text;
    EXPECT_EQ(ep->port, c.port) << c.text;
  }
}

TEST(ParseEndpoint, RefusesBadPortsAndBareIpv6) {
  for (const char* text : {"host:70000", "host:65536", "host:abc", "host:", "[::1]:", "::1", "::1:7000",
                           "[::1", "[::1]7000", "user@host:80", "host:-1"}) {
    std::string why;
    EXPECT_FALSE(parse_endpoint(text, &why)) << text;
    EXPECT_FALSE(why.empty()) << text;
  }
  std::string why;
  EXPECT_FALSE(parse_endpoint("host:70000", &why));
  EXPECT_EQ(why, "port must be a number from 0 to 65535");
}

// Regression from fuzz/fuzz_url.cpp: a bracket inside the host parsed, then printed as a URL that
// no longer parsed ("pxfer://[[]/x" gave host "[", printed "pxfer://[:7521/x").
TEST(ParseUrl, RefusesBracketsInsideHostSoEveryUrlPrintsBackParseable) {
  for (const char* text : {"pxfer://[[]/et\xff\xff", "pxfer://[[::1]:7000/x", "pxfer://a]:7000/x", "pxfer://a[b/x",
                           "pxfer://[a]b]/x"}) {
    std::string why;
    EXPECT_FALSE(parse_url(text, &why)) << text;
    EXPECT_FALSE(why.empty()) << text;
  }
  for (const char* text : {"pxfer://[::1]:7000/x", "pxfer://[localhost]/y/", "pxfer://h:1//etc"}) {
    auto url = parse_url(text);
    ASSERT_TRUE(url) << text;
    auto again = parse_url(url->to_string());
    ASSERT_TRUE(again) << url->to_string();
    EXPECT_EQ(again->host, url->host);
    EXPECT_EQ(again->port, url->port);
    EXPECT_EQ(again->path, url->path);
  }
}

}  // namespace
}  // namespace pxfer
