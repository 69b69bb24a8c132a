// Small files' bytes on the small-file channel (issue 12.3, under issue 11's rules): the channel is
// a clear data connection, so an on-path attacker can read it, write into it and copy its first
// frames. A proxy owned by this test sits between pxfer and pxferd and, on the first clear
// connection (the first worker's channel), alters one file's bytes (towards pxferd in a put -r,
// towards pxfer in a get -r), sends one file's frame a second time, or copies the channel's
// ATTACH and proof into a connection of its own. Every time each stored file must be its source's
// exact bytes, pxfer must end with every file done, and the intruder must get no ATTACH_OK.
#include <gtest/gtest.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <filesystem>
#include <functional>
#include <iostream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "support/e2e.hpp"
#include "support/path_proxy.hpp"
#include "support/raw_frames.hpp"

namespace pxfer::e2e {
namespace {

namespace fs = std::filesystem;
using Bytes = std::vector<std::uint8_t>;

// Frame types as docs/protocol.md numbers them, written out: the test speaks as an outsider.
constexpr std::uint16_t t_attach_ok = 6, t_attach_proof = 40, t_small_data = 52;

enum class Attack {
  alter_put,     // one byte of a file's data changed on its way to pxferd
  alter_get,     // the same on its way to pxfer
  replay_put,    // a file's SMALL_DATA frame sent to pxferd a second time, right after the first
  hijack,        // the channel's ATTACH and proof copied into the intruder's own connection
};

using raw::be16;
using raw::be32;
using raw::connect_loopback;
using raw::recv_all;
using raw::send_all;

class ChannelProxy : public PathProxy {
 public:
  ChannelProxy(std::uint16_t upstream, Attack attack) : PathProxy(upstream), attack_(attack) { start(); }
  ~ChannelProxy() override { stop(); }
  std::string url(const std::string& path) const { return "pxfer://127.0.0.1:" + std::to_string(port()) + "/" + path; }
  int struck() const { return struck_.load(); }
  int small_data_frames() const { return small_data_.load(); }
  bool intruder_accepted() const { return intruder_accepted_.load(); }

 private:

  void forward_plain(int from, int to) {
    std::uint8_t buf[65536];
    for (;;) {
      ssize_t n = ::recv(from, buf, sizeof buf, 0);
      if (n <= 0 || !send_all(to, buf, static_cast<std::size_t>(n))) break;
    }
    ::shutdown(to, SHUT_RDWR);
    ::shutdown(from, SHUT_RDWR);
  }

  // TLS (control connections) is copied untouched; the first clear connection is the first
  // channel: its frames are read one by one both ways, and the attack is made on them.
  void from_client(int client, int server) override {
    std::uint8_t first = 0;
    if (::recv(client, &first, 1, MSG_PEEK) != 1 || first == 0x16 || seen_channel_.exchange(true)) {
      spawn([this, client, server] { forward_plain(server, client); });
      forward_plain(client, server);
      return;
    }
    spawn([this, client, server] { frames(server, client, attack_ == Attack::alter_get); });
    frames(client, server, attack_ == Attack::alter_put || attack_ == Attack::replay_put);
  }

  // Frame by frame from `from` to `to`; with `strike`, the fifth SMALL_DATA that carries at least
  // 100 bytes is altered (or sent twice). Towards pxferd, the join (ATTACH and its proof) is kept
  // for the hijack.
  void frames(int from, int to, bool strike) {
    Bytes join;
    Bytes frame;
    int seen = 0;
    for (;;) {
      frame.resize(8);
      if (!recv_all(from, frame.data(), 8)) break;
      const std::uint32_t len = be32(frame.data());
      const std::uint16_t type = be16(frame.data() + 4);
      frame.resize(8 + len);
      if (!recv_all(from, frame.data() + 8, len)) break;
      if (type != t_small_data && join.size() < 4096) join.insert(join.end(), frame.begin(), frame.end());
      if (type == t_attach_proof && attack_ == Attack::hijack && !hijacked_.exchange(true))
        spawn([this, join] { intrude(join); });
      const bool big = type == t_small_data && len >= 8 + 4 + 16 + 4 + 100;
      if (type == t_small_data) ++small_data_;
      const bool now = strike && big && ++seen == 5;
      if (now && attack_ != Attack::replay_put) {
        frame[8 + 4 + 16 + 4 + 50] ^= 0x5a;  // a byte of the file's data
        note("altered one byte of a file's data in a SMALL_DATA frame");
        ++struck_;
      }
      if (!send_all(to, frame.data(), frame.size())) break;
      if (now && attack_ == Attack::replay_put) {
        note("sent a SMALL_DATA frame a second time");
        ++struck_;
        if (!send_all(to, frame.data(), frame.size())) break;
      }
    }
    ::shutdown(to, SHUT_RDWR);
    ::shutdown(from, SHUT_RDWR);
  }

  // The copied ATTACH and proof on the intruder's own connection: pxferd must not answer
  // ATTACH_OK (its nonce is new, and the channel is joined already).
  void intrude(const Bytes& join) {
    int fd = connect_loopback(upstream_);
    if (fd < 0) return;
    track(fd);
    note("intruder: sending the channel's " + std::to_string(join.size()) + " bytes of ATTACH and proof");
    ++struck_;
    if (!send_all(fd, join.data(), join.size())) note("intruder: the server closed the connection while it sent");
    Bytes header(8);
    while (recv_all(fd, header.data(), 8)) {
      const std::uint32_t len = be32(header.data());
      const std::uint16_t type = be16(header.data() + 4);
      Bytes payload(std::min<std::uint32_t>(len, 1 << 20));
      if (len > payload.size() || !recv_all(fd, payload.data(), len)) break;
      note("intruder: server sent frame type " + std::to_string(type));
      if (type == t_attach_ok) intruder_accepted_ = true;
    }
    note("intruder: connection closed by the server");
  }

  Attack attack_;
  std::atomic<bool> seen_channel_{false};
  std::atomic<bool> hijacked_{false};
  std::atomic<bool> intruder_accepted_{false};
  std::atomic<int> struck_{0};
  std::atomic<int> small_data_{0};
};

void make_tree(const std::string& top, int count) {
  fs::create_directories(top);
  for (int i = 0; i < count; ++i)
    make_file(top + "/f" + std::to_string(i), 1000 + static_cast<std::uint64_t>(i) * 997, static_cast<std::uint64_t>(40 + i));
}

void expect_same_tree(const std::string& want, const std::string& got, int count) {
  for (int i = 0; i < count; ++i) {
    const std::string name = "/f" + std::to_string(i);
    ASSERT_TRUE(path_exists(got + name)) << got + name << " missing";
    EXPECT_TRUE(files_equal(want + name, got + name)) << name << " differs from its source";
  }
  for (const auto& e : fs::directory_iterator(got))
    EXPECT_EQ(e.path().filename().string().find(".pxfer-"), std::string::npos) << "left behind: " << e.path();
}

class SmallChannelAttack : public DirsTest, public ::testing::WithParamInterface<Attack> {};

TEST_P(SmallChannelAttack, EveryFileIsItsSourceAndNothingForgedIsAccepted) {
  constexpr int count = 60;
  ServerProcess server = serve();
  ChannelProxy proxy(server.port(), GetParam());
  const bool get = GetParam() == Attack::alter_get;
  if (get) make_tree(root + "/tree", count);
  else make_tree(local + "/tree", count);
  RunResult run = get ? run_pxfer("get", "-r", "-c", "1", proxy.url("tree"), local + "/back")
                      : run_pxfer("put", "-r", "-c", "1", local + "/tree", proxy.url("tree"));
  SCOPED_TRACE(proxy.what_happened() + "--- pxfer:\n" + run.out + run.err + "--- pxferd:\n" + server.log());
  std::cout << proxy.what_happened();  // what the attacker did, for the record
  ASSERT_GT(proxy.small_data_frames(), 0) << "no SMALL_DATA frame went through the proxy: no small-file channel";
  ASSERT_GT(proxy.struck(), 0) << "the attack was never made";
  EXPECT_FALSE(proxy.intruder_accepted()) << "pxferd let the intruder join the channel";
  EXPECT_EQ(run.exit_code, 0);
  EXPECT_NE(run.out.find(std::to_string(count) + " files: " + std::to_string(count) + " done"), std::string::npos);
  if (get) expect_same_tree(root + "/tree", local + "/back", count);
  else expect_same_tree(local + "/tree", root + "/tree", count);
  if (GetParam() == Attack::alter_put || GetParam() == Attack::replay_put) {
    EXPECT_NE(server.log().find("failed its tag"), std::string::npos) << "pxferd did not notice the forged frame";
  }
  if (GetParam() == Attack::hijack) {
    EXPECT_NE(server.log().find("small-file channel refused"), std::string::npos) << "pxferd did not refuse the intruder";
  }
}

INSTANTIATE_TEST_SUITE_P(Attacks, SmallChannelAttack,
                         ::testing::Values(Attack::alter_put, Attack::alter_get, Attack::replay_put, Attack::hijack),
                         [](const auto& param_info) {
                           switch (param_info.param) {
                             case Attack::alter_put: return std::string("AlteredBytesTowardsTheServer");
                             case Attack::alter_get: return std::string("AlteredBytesTowardsTheClient");
                             case Attack::replay_put: return std::string("AFileFrameSentTwice");
                             case Attack::hijack: return std::string("ChannelAttachCopiedIntoAnotherConnection");
                           }
                           return std::string("unknown");
                         });

}  // namespace
}  // namespace pxfer::e2e
