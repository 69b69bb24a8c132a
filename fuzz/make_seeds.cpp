// Writes the frame target's seed corpus (fuzz/corpus/frame/): one valid frame of each message
// type, made with wire::encode so the seeds follow the format. fuzz/run.sh --seeds rebuilds them.
#include <cstdio>
#include <string>

#include "wire/wire.hpp"

using namespace pxfer::wire;

static void write(const std::string& dir, const std::string& name, const std::vector<std::uint8_t>& bytes) {
  std::string path = dir + "/" + name;
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) {
    std::perror(path.c_str());
    std::exit(1);
  }
  std::fwrite(bytes.data(), 1, bytes.size(), f);
  std::fclose(f);
}

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_seeds DIR\n");
    return 2;
  }
  std::string dir = argv[1];
  Hello hello;
  hello.agent = "pxfer/0.1.0";
  write(dir, "hello", encode(hello));
  HelloOk hello_ok;
  hello_ok.agent = "pxferd/0.1.0";
  write(dir, "hello_ok", encode(hello_ok));
  Auth auth;
  auth.token = "pxt_0123456789abcdef0123456789abcdef";
  write(dir, "auth", encode(auth));
  AuthOk auth_ok;
  auth_ok.identity = "alice";
  auth_ok.rights = right_read | right_write;
  write(dir, "auth_ok", encode(auth_ok));
  Open open;
  open.direction = Direction::put;
  open.checksum = 1;
  open.flags = open_overwrite | open_want_stats;
  open.streams = 4;
  open.block_size = 4 << 20;
  open.size = 1 << 30;
  open.path = "dir/file.bin";
  open.congestion = "bbr";
  open.stats_interval_ms = 1000;
  open.compress_mode = 1;
  open.compress_level = 3;
  open.mtime_ns = 1700000000123456789;
  write(dir, "open", encode(open));
  OpenOk open_ok;
  open_ok.token.fill(0xab);
  open_ok.size = 12345;
  open_ok.block_size = 1 << 20;
  write(dir, "open_ok", encode(open_ok));
  open_ok.has_admission = true;  // both tails: admission, and the sender's congestion control
  open_ok.streams = 8;
  open_ok.has_congestion = true;
  open_ok.congestion = "bbr";
  write(dir, "open_ok_tails", encode(open_ok));
  Have have;
  have.first_block = 8;
  have.bitmap = {0xff, 0x0f, 0x00, 0x81};
  write(dir, "have", encode(have));
  Attach attach;
  attach.token.fill(0x5a);
  attach.stream = 3;
  write(dir, "attach", encode(attach));
  attach.has_proof = true;  // cap_attach_proven: the nonce and proof in its tail
  attach.nonce.fill(0x6b);
  attach.mac.fill(0x7c);
  write(dir, "attach_proven", encode(attach));
  write(dir, "attach_ok", encode(AttachOk{212992, 131072}));
  AttachChallenge challenge;
  challenge.nonce.fill(0x3c);
  write(dir, "attach_challenge", encode(challenge));
  AttachProof proof;
  proof.mac.fill(0xc3);
  write(dir, "attach_proof", encode(proof));
  write(dir, "tpc_grant_request", encode(TpcGrantRequest{Direction::put, open_overwrite, 1 << 30, "atlas/run42.root"}));
  write(dir, "tpc_grant", encode(TpcGrant{std::string(64, 'a'), 60000}));
  TpcStart start;
  start.mode = CopyMode::push;
  start.checksum = 1;
  start.streams = 8;
  start.block_size = 4 << 20;
  start.local_path = "atlas/run42.root";
  start.peer_url = "pxfer://se02.example.org:7777/atlas/run42.root";
  start.grant = std::string(64, 'a');
  start.peer_fingerprint = "sha256:" + std::string(64, 'f');
  write(dir, "tpc_start", encode(start));
  write(dir, "tpc_progress", encode(TpcProgress{1 << 20, 1 << 30, {StreamFigures{0, 1 << 20, 10, 1448, 50, 0, 0, 1 << 20, 1 << 27}}}));
  write(dir, "tpc_done", encode(TpcDone{1 << 30, 0, 1500, 8, 4 << 20, 1, std::string(8, 'e'), 0}));
  PutSmall put_small;
  put_small.id = 17;
  put_small.flags = open_overwrite;
  put_small.checksum = 1;
  put_small.path = "small/f17.dat";
  put_small.value = "0a3c1f2e";
  put_small.mtime_ns = 1700000000123456789;
  put_small.transfer_id.fill(0x42);
  put_small.data = Blob(std::vector<std::uint8_t>(300, 0x5a));
  write(dir, "put_small", encode(put_small));
  write(dir, "put_small_ok", encode(PutSmallOk{17, 0, "0a3c1f2e", ""}));
  write(dir, "get_small", encode(GetSmall{18, 2, "small/f18.dat"}));
  GetSmallOk get_small_ok;
  get_small_ok.id = 18;
  get_small_ok.size = 4;
  get_small_ok.mtime_ns = 1700000000123456789;
  get_small_ok.value = std::string(64, 'e');
  get_small_ok.data = {1, 2, 3, 4};
  write(dir, "get_small_ok", encode(get_small_ok));
  get_small_ok.data = {};  // its bytes on the small-file channel
  write(dir, "get_small_ok_channel", encode(get_small_ok));
  write(dir, "small_channel", encode(SmallChannel{}));
  SmallChannelOk channel_ok;
  channel_ok.token.fill(0x24);
  write(dir, "small_channel_ok", encode(channel_ok));
  SmallData small_data;
  small_data.id = 18;
  small_data.tag.fill(0x77);
  small_data.data = Blob(std::vector<std::uint8_t>(300, 0x3c));
  write(dir, "small_data", encode(small_data));
  // Streamed I/O (cap_stream_io): one seed per frame, with bytes where a frame carries them.
  write(dir, "stream_open", encode(StreamOpen{StreamMode::write, open_overwrite, "atlas/streamed.root"}));
  write(dir, "stream_open_ok", encode(StreamOpenOk{1, 4578, 1700000000123456789}));
  write(dir, "stream_read", encode(StreamRead{1, 4096, 4 << 20}));
  write(dir, "stream_data", encode(StreamData{1, 4096, 1, Blob(std::vector<std::uint8_t>(482, 0x2e))}));
  write(dir, "stream_write", encode(StreamWrite{1, 0, Blob(std::vector<std::uint8_t>(300, 0x4b))}));
  write(dir, "stream_close", encode(StreamClose{1}));
  write(dir, "ack", encode(Ack{4 << 20, 1 << 20}));
  write(dir, "end", encode(End{}));
  write(dir, "retire", encode(Retire{}));
  Commit commit;
  commit.bytes = 1 << 30;
  commit.checksum = 1;
  commit.value = std::string(64, 'e');
  write(dir, "commit", encode(commit));
  Result result;
  result.value = std::string(64, 'e');
  result.message = "ok";
  write(dir, "result", encode(result));
  ErrorMsg error;
  error.code = 4;
  error.message = "no such file: dir/missing";
  write(dir, "error", encode(error));
  write(dir, "ping", encode(Ping{42}));
  write(dir, "pong", encode(Pong{42}));
  Stats stats;
  stats.streams.push_back(StreamFigures{0, 1 << 20, 10, 1448, 250, 0, 0, 212992, 1000000000});
  stats.streams.push_back(StreamFigures{1, 2 << 20, 20, 1448, 300, 2, 4096, 212992, 900000000});
  write(dir, "stats", encode(stats));
  write(dir, "info_request", encode(InfoRequest{}));
  Info info;
  info.entries = {{"tcp_rmem", "4096 131072 6291456"}, {"congestion", "cubic"}};
  write(dir, "info", encode(info));
  write(dir, "remove", encode(Remove{"old/file"}));
  write(dir, "done", encode(Done{}));
  write(dir, "list", encode(List{"dir"}));
  Listing listing;
  listing.entries.push_back(ListEntry{EntryKind::directory, 0, 0755, 1700000000000000000, "sub"});
  listing.entries.push_back(ListEntry{EntryKind::file, 4096, 0644, 1700000000000000000, "sub/a.txt"});
  write(dir, "listing", encode(listing));
  listing.more = 1;  // pxferd streams a LIST: every frame but the last says another follows
  write(dir, "listing_more", encode(listing));
  write(dir, "mkdir", encode(Mkdir{"a/b/c"}));
  write(dir, "queued", encode(Queued{2, 4, 3}));
  write(dir, "stat", encode(Stat{"atlas/run42.root"}));
  write(dir, "stat_ok", encode(StatOk{ListEntry{EntryKind::file, 4096, 0644, 1700000000000000000, ""}}));
  write(dir, "rename", encode(Rename{"atlas/a.root", "atlas/b.root", 0}));
  write(dir, "remove_tree", encode(RemoveTree{"atlas/old", 1}));
  write(dir, "list_children", encode(ListChildren{"atlas"}));
  auto block_frame = [](const BlockHeader& b) {
    auto h = encode_block_header(b);
    std::vector<std::uint8_t> v(h.begin(), h.end());
    v.resize(v.size() + b.wire_length, 0x61);
    v.resize(v.size() + block_tag_size, 0x7a);  // the MAC tag after the payload
    return v;
  };
  write(dir, "block", block_frame(BlockHeader{8192, 4096, 0, 4096}));
  write(dir, "block_zstd", block_frame(BlockHeader{0, 4096, block_compressed_zstd, 100}));
  return 0;
}
