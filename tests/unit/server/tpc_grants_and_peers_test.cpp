// Third-party copy on the server, without sockets: the one-time grants (tpc_grants.hpp), the gate
// that keeps a grant's session to its one OPEN, and the operator's peer policy (tpc_peers.hpp).
#include <gtest/gtest.h>

#include "pxfer/common/error.hpp"
#include "server/tpc_grants.hpp"
#include "server/tpc_peers.hpp"
#include "test_support.hpp"

namespace pxfer::server {
namespace {

using namespace std::chrono_literals;
using test::code_of;

const auto put = static_cast<std::uint8_t>(wire::Direction::put);

TpcScope scope_of(const std::string& path, std::uint64_t size = 1000) { return TpcScope{path, put, size, false, "alice"}; }

wire::Open open_of(const std::string& path, std::uint64_t size = 1000) {
  wire::Open o;
  o.direction = wire::Direction::put;
  o.streams = 4;
  o.block_size = 4u << 20;
  o.size = size;
  o.path = path;
  return o;
}

TEST(TpcGrants, AGrantLogsInOnceWithRightsToItsPathOnly) {
  GrantBook book(60s);
  const auto t0 = Clock::now();
  const std::string secret = book.issue(scope_of("atlas/y.root"), t0);
  EXPECT_TRUE(GrantBook::is_grant(secret));
  EXPECT_GE(secret.size(), 64u);
  SessionRights rights = book.redeem(secret, t0 + 1s);
  ASSERT_TRUE(rights.tpc);
  EXPECT_EQ(rights.tpc->path, "atlas/y.root");
  EXPECT_FALSE(Authenticator::authorize(rights, "atlas/y.root", true));
  EXPECT_TRUE(Authenticator::authorize(rights, "atlas/other.root", true));
  EXPECT_TRUE(Authenticator::authorize(rights, "", false));
  // Used once: the same secret again is refused, like one never issued.
  EXPECT_EQ(code_of([&] { book.redeem(secret, t0 + 2s); }), Errc::permission);
  EXPECT_EQ(code_of([&] { book.redeem(std::string(GrantBook::prefix).append(64, '0'), t0); }), Errc::permission);
}

TEST(TpcGrants, AnExpiredGrantIsRefused) {
  GrantBook book(60s);
  const auto t0 = Clock::now();
  const std::string secret = book.issue(scope_of("y"), t0);
  EXPECT_EQ(code_of([&] { book.redeem(secret, t0 + 60s); }), Errc::permission);
}

TEST(TpcGrants, TwoGrantsAreDifferentAndIndependent) {
  GrantBook book(60s);
  const auto t0 = Clock::now();
  const std::string a = book.issue(scope_of("a"), t0), b = book.issue(scope_of("b"), t0);
  EXPECT_NE(a, b);
  EXPECT_EQ(book.redeem(b, t0).tpc->path, "b");
  EXPECT_EQ(book.redeem(a, t0).tpc->path, "a");
}

TEST(TpcGrants, OutstandingGrantsAreBounded) {
  GrantBook book(60s);
  const auto t0 = Clock::now();
  for (std::size_t i = 0; i < GrantBook::max_outstanding; ++i) book.issue(scope_of("f"), t0);
  EXPECT_EQ(code_of([&] { book.issue(scope_of("f"), t0); }), Errc::network);
  EXPECT_NO_THROW(book.issue(scope_of("f"), t0 + 61s)) << "expired grants make room";
}

TEST(TpcGrants, TheGateAdmitsOneMatchingOpenAndPings) {
  const TpcScope scope = scope_of("atlas/y.root");
  unsigned opens = 0;
  EXPECT_FALSE(grant_refusal(scope, wire::Ping{1}, opens));
  EXPECT_FALSE(grant_refusal(scope, open_of("atlas//y.root"), opens));
  EXPECT_TRUE(grant_refusal(scope, open_of("atlas/y.root"), opens)) << "a second OPEN";
}

TEST(TpcGrants, TheGateRefusesEverythingElse) {
  const TpcScope scope = scope_of("atlas/y.root");
  auto refused = [&](const wire::Message& m) {
    unsigned opens = 0;
    auto r = grant_refusal(scope, m, opens);
    return r && r->code() == Errc::permission;
  };
  EXPECT_TRUE(refused(open_of("atlas/z.root")));
  EXPECT_TRUE(refused(open_of("atlas/y.root/../z.root")));
  EXPECT_TRUE(refused(open_of("atlas/y.root", 1001))) << "another size";
  auto get = open_of("atlas/y.root");
  get.direction = wire::Direction::get;
  EXPECT_TRUE(refused(get));
  auto overwrite = open_of("atlas/y.root");
  overwrite.flags = wire::open_overwrite;
  EXPECT_TRUE(refused(overwrite)) << "the grant did not allow overwriting";
  EXPECT_TRUE(refused(wire::Remove{"atlas/y.root"}));
  EXPECT_TRUE(refused(wire::Stat{"atlas/y.root"}));
  EXPECT_TRUE(refused(wire::List{""}));
  EXPECT_TRUE(refused(wire::TpcGrantRequest{wire::Direction::put, 0, 1, "x"}));
  TpcScope may_overwrite = scope;
  may_overwrite.overwrite = true;
  unsigned opens = 0;
  EXPECT_FALSE(grant_refusal(may_overwrite, overwrite, opens));
}

TEST(TpcPeers, EmptyAllowsNothing) {
  PeerPolicy none({});
  EXPECT_TRUE(none.empty());
  EXPECT_FALSE(none.allows("127.0.0.1", "127.0.0.1", 7777));
}

TEST(TpcPeers, AddressesNamesPortsAndNetworks) {
  PeerPolicy p({"127.0.0.1:*", "se02.example.org:7777", "10.1.0.0/16:*", "[::1]:9000", "fd00::/8:*"});
  EXPECT_TRUE(p.allows("127.0.0.1", "127.0.0.1", 1));
  EXPECT_TRUE(p.allows("localhost", "127.0.0.1", 1)) << "an address entry matches the resolved address";
  EXPECT_FALSE(p.allows("127.0.0.2", "127.0.0.2", 1));
  EXPECT_TRUE(p.allows("SE02.example.org", "192.0.2.7", 7777));
  EXPECT_FALSE(p.allows("se02.example.org", "192.0.2.7", 7778)) << "another port";
  EXPECT_TRUE(p.allows("x", "10.1.200.3", 5));
  EXPECT_FALSE(p.allows("x", "10.2.0.1", 5));
  EXPECT_TRUE(p.allows("x", "::ffff:10.1.0.9", 5)) << "IPv4-mapped counts as IPv4";
  EXPECT_TRUE(p.allows("::1", "::1", 9000));
  EXPECT_FALSE(p.allows("::1", "::1", 9001));
  EXPECT_TRUE(p.allows("x", "fd12::1", 1));
}

// Issue 34: an entry without a port reaches the pxfer port only, not every service of the host.
TEST(TpcPeers, AnEntryWithoutAPortReachesOnlyThePxferPort) {
  PeerPolicy p({"127.0.0.1", "se02.example.org", "10.1.0.0/16", "fd00::/8", "[::1]", "10.9.0.0/16:2811"});
  EXPECT_TRUE(p.allows("127.0.0.1", "127.0.0.1", 7521));
  EXPECT_FALSE(p.allows("127.0.0.1", "127.0.0.1", 22));
  EXPECT_TRUE(p.allows("se02.example.org", "192.0.2.7", 7521));
  EXPECT_FALSE(p.allows("se02.example.org", "192.0.2.7", 3306));
  EXPECT_TRUE(p.allows("x", "10.1.2.3", 7521));
  EXPECT_FALSE(p.allows("x", "10.1.2.3", 25));
  EXPECT_TRUE(p.allows("x", "fd00::5", 7521));
  EXPECT_FALSE(p.allows("x", "fd00::5", 80));
  EXPECT_TRUE(p.allows("::1", "::1", 7521));
  EXPECT_FALSE(p.allows("::1", "::1", 7522));
  EXPECT_TRUE(p.allows("x", "10.9.1.1", 2811)) << "a network with a port named";
  EXPECT_FALSE(p.allows("x", "10.9.1.1", 7521));
}

TEST(TpcPeers, MalformedEntriesAreUsageErrorsNamingThem) {
  for (const char* bad : {"10.0.0.0/33", "10.0.0.0/", "host:0", "host:70000", "bad host", "[::1", "::1/129", "a/8", "host:", "10.0.0.0/8:", "10.0.0.0/8:0", "host:**"}) {
    SCOPED_TRACE(bad);
    try {
      PeerPolicy p({bad});
      ADD_FAILURE() << "accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Errc::usage);
      EXPECT_NE(std::string(e.what()).find(bad), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace pxfer::server
