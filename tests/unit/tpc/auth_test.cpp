// Tokens file, access file and known-hosts parsing; token hashing and constant-time lookup.
#include <gtest/gtest.h>

#include "client/known_hosts.hpp"
#include "pxfer/common/error.hpp"
#include "wire/wire.hpp"
#include "server/auth.hpp"
#include "server/voms_attributes.hpp"

namespace pxfer {
namespace {

using server::AccessMap;
using server::Grant;
using server::TokenStore;

TEST(Tokens, GeneratedTokensAre64HexDigitsAndDiffer) {
  auto a = server::generate_token(), b = server::generate_token();
  EXPECT_EQ(a.size(), 64u);
  EXPECT_EQ(a.find_first_not_of("0123456789abcdef"), std::string::npos);
  EXPECT_NE(a, b);
}

TEST(Tokens, StoredLineIsSaltedAndIdentifiesOnlyItsToken) {
  std::string token = server::generate_token();
  std::string line = server::token_line("alice", token);
  EXPECT_EQ(line.find(token), std::string::npos) << "the token must not be stored in clear";
  EXPECT_TRUE(line.starts_with("alice sha256:"));
  EXPECT_NE(line, server::token_line("alice", token)) << "a fresh salt each time";
  std::string other = server::generate_token();
  auto store = TokenStore::parse("# comment\n\n" + line + "\n" + server::token_line("bob", other) + "\n", "tokens");
  EXPECT_EQ(store.size(), 2u);
  EXPECT_EQ(store.identify(token), "alice");
  EXPECT_EQ(store.identify(other), "bob");
  EXPECT_EQ(store.identify(token.substr(0, 63)), std::nullopt);
  EXPECT_EQ(store.identify(token + "0"), std::nullopt);
  EXPECT_EQ(store.identify(""), std::nullopt);
}

TEST(Tokens, MalformedLinesAreRefusedWithFileAndLine) {
  auto refused = [](const std::string& text) {
    try {
      TokenStore::parse(text, "tok");
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Errc::usage);
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(refused("alice\n").find("tok line 1"), std::string::npos);
  EXPECT_NE(refused("# x\nalice md5:00:11\n").find("tok line 2"), std::string::npos);
  EXPECT_NE(refused("alice sha256:00:1122\n").find("bad salt or hash"), std::string::npos);
  EXPECT_NE(refused("al/ice sha256:00:" + std::string(64, '0') + "\n").find("bad identity"), std::string::npos);
  std::string ok = "alice sha256:00:" + std::string(64, '0') + "\n";
  EXPECT_NE(refused(ok + ok).find("twice"), std::string::npos);
}

TEST(Tokens, LogSafeIdRevealsNothingOfTheToken) {
  std::string token = std::string(64, 'f');
  std::string id = server::log_safe_token_id(token);
  EXPECT_TRUE(id.starts_with("token-id:"));
  EXPECT_EQ(id.size(), 9u + 8u);
  EXPECT_EQ(id.find("ffff"), std::string::npos);
}

TEST(Access, DeepestGrantDecidesAndDotDotIsNeverAllowed) {
  auto map = AccessMap::parse("alice / ro\nalice atlas rw\nbob cms/ ro\n# c\n", "access");
  auto alice = map.grants_of("alice");
  ASSERT_EQ(alice.size(), 2u);
  EXPECT_TRUE(server::allowed(alice, "x.bin", false));
  EXPECT_FALSE(server::allowed(alice, "x.bin", true));
  EXPECT_TRUE(server::allowed(alice, "atlas/run/x.bin", true));
  EXPECT_TRUE(server::allowed(alice, "./atlas//x.bin", true));
  EXPECT_FALSE(server::allowed(alice, "atlasx/y", true));
  EXPECT_FALSE(server::allowed(alice, "atlas/../y", false));
  auto bob = map.grants_of("bob");
  EXPECT_TRUE(server::allowed(bob, "cms/a", false));
  EXPECT_TRUE(server::allowed(bob, "cms", false));
  EXPECT_FALSE(server::allowed(bob, "", false));
  EXPECT_FALSE(server::allowed(bob, "cms/a", true));
  EXPECT_TRUE(map.grants_of("eve").empty());
}

TEST(Access, MalformedLinesAreRefused) {
  EXPECT_THROW(AccessMap::parse("alice / rx\n", "a"), Error);
  EXPECT_THROW(AccessMap::parse("alice ../up rw\n", "a"), Error);
  EXPECT_THROW(AccessMap::parse("alice /\n", "a"), Error);
}

TEST(Access, GridDnsInQuotesAndFqanPatternsAreIdentities) {
  auto map = AccessMap::parse("\"/DC=org/DC=example/CN=Jane Doe\" /jane rw\n"
                              "fqan:/atlas/Role=production atlas rw\nfqan:/atlas pub ro\n", "access");
  ASSERT_EQ(map.grants_of("/DC=org/DC=example/CN=Jane Doe").size(), 1u);
  EXPECT_EQ(map.grants_of_fqans({"/atlas/higgs/Role=production"}).size(), 2u);
  EXPECT_EQ(map.grants_of_fqans({"/atlas/Role=NULL/Capability=NULL"}).size(), 1u);
  EXPECT_TRUE(map.grants_of_fqans({"/atlasx/Role=production", "/cms"}).empty());
  EXPECT_THROW(AccessMap::parse("\"/DC=org/CN=Unclosed /jane rw\n", "a"), Error);
  EXPECT_THROW(AccessMap::parse("\"/DC=org/CN=Jane\" \"/jane\"x rw extra\n", "a"), Error);
}

TEST(Access, FqanPatternsMatchGroupsBelowAndTheirRoleOnly) {
  EXPECT_TRUE(server::fqan_matches("/atlas", "/atlas/Role=NULL/Capability=NULL"));
  EXPECT_TRUE(server::fqan_matches("/atlas", "/atlas/higgs/Role=production"));
  EXPECT_TRUE(server::fqan_matches("/atlas/Role=production", "/atlas/Role=production/Capability=NULL"));
  EXPECT_FALSE(server::fqan_matches("/atlas/Role=production", "/atlas"));
  EXPECT_FALSE(server::fqan_matches("/atlas/Role=production", "/atlas/Role=NULL"));
  EXPECT_FALSE(server::fqan_matches("/atlas", "/atlasx"));
  EXPECT_FALSE(server::fqan_matches("/atlas/higgs", "/atlas"));
}

TEST(KnownHosts, ParsesPinsSkipsJunkAndFindsChanges) {
  std::string fp(64, 'a'), fp2(64, 'b');
  auto hosts = parse_known_hosts("# pinned\nse01:7521 sha256:" + fp + "\nbroken line here\n[::1]:7521 SHA256:" +
                                 std::string(64, 'B') + "\nse01:7521 sha256:" + fp2 + "\nnoport sha256:" + fp + "\n");
  ASSERT_EQ(hosts.size(), 3u);
  EXPECT_EQ(hosts[0].line, 2u);
  EXPECT_EQ(hosts[1].fingerprint, "sha256:" + fp2) << "normalised to lower case";
  EXPECT_EQ(check_known_host(hosts, "se01:7521", "sha256:" + fp).match, HostMatch::pinned);
  auto changed = check_known_host(hosts, "se01:7521", "sha256:" + fp2);
  EXPECT_EQ(changed.match, HostMatch::changed) << "the first pin wins";
  EXPECT_EQ(changed.entry.line, 2u);
  EXPECT_EQ(check_known_host(hosts, "se02:7521", "sha256:" + fp).match, HostMatch::unknown);
  EXPECT_EQ(check_known_host(hosts, "[::1]:7521", "sha256:" + fp2).match, HostMatch::pinned);
}

wire::DecodeStatus decode(const std::vector<std::uint8_t>& frame, wire::Message& out) {
  wire::FrameHeader h;
  auto st = wire::decode_header(frame, h);
  if (st != wire::DecodeStatus::ok) return st;
  return wire::decode_message(h, std::span(frame).subspan(wire::header_size), out);
}

TEST(AuthMessages, RoundTripAtTheirLimitsAndRefuseBeyond) {
  wire::Message out;
  wire::Message auth = wire::Auth{std::string(wire::max_auth_token, 't')};
  ASSERT_EQ(decode(wire::encode(auth), out), wire::DecodeStatus::ok);
  EXPECT_EQ(std::get<wire::Auth>(out).token.size(), wire::max_auth_token);
  wire::Message too_long = wire::Auth{std::string(wire::max_auth_token + 1, 't')};
  EXPECT_THROW(wire::encode(too_long), Error);
  wire::Message ok = wire::AuthOk{std::string(wire::max_identity_length, 'i'), wire::right_read | wire::right_write};
  ASSERT_EQ(decode(wire::encode(ok), out), wire::DecodeStatus::ok);
  EXPECT_EQ(std::get<wire::AuthOk>(out).rights, wire::right_read | wire::right_write);
  auto bad_rights = wire::encode(wire::Message{wire::AuthOk{"x", 0}});
  bad_rights.back() = 4;  // an unknown right
  EXPECT_EQ(decode(bad_rights, out), wire::DecodeStatus::bad_field);
  // A hand-made AUTH whose token length is over the limit is refused before it is read.
  // (payload 8195 bytes: a 2-byte length of 8193, one over max_auth_token, and the token)
  static_assert(wire::max_auth_token == 8192);
  std::vector<std::uint8_t> frame{0, 0, 0x20, 0x03, 0, 24, 0, 0, 0x20, 0x01};
  frame.resize(frame.size() + 8193, 'x');
  EXPECT_EQ(decode(frame, out), wire::DecodeStatus::too_long);
}

}  // namespace
}  // namespace pxfer
