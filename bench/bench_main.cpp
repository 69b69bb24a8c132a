// pxfer-bench: the hot paths (framing, checksums), a whole in-process loopback transfer and a
// batch of 200 small files (put -r / get -r, 8 at once),
// reported in bytes/s beside a raw loopback TCP copy measured by the same binary in the same run.
// Results and the commands that produced them: bench/results/.
#include <benchmark/benchmark.h>
#include <spdlog/spdlog.h>
#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <thread>

#include <openssl/evp.h>

#include "checksum/adler32_simd.hpp"
#include "checksum/block_mac.hpp"
#include "pxfer/client/batch.hpp"
#include "pxfer/core/checksum.hpp"
#include "pxfer/client/client.hpp"
#include "pxfer/server/server.hpp"
#include "wire/wire.hpp"
#include "raw_tcp.hpp"

namespace fs = std::filesystem;
using namespace pxfer;

namespace {

std::vector<std::uint8_t> random_bytes(std::size_t n) {
  std::vector<std::uint8_t> v(n);
  std::mt19937_64 rng(42);
  for (std::size_t i = 0; i + 8 <= n; i += 8) {
    std::uint64_t x = rng();
    std::memcpy(&v[i], &x, 8);
  }
  return v;
}

wire::Open sample_open() {
  wire::Open open;
  open.path = "data/run2026/file-000123.root";
  open.block_size = 4 << 20;
  open.streams = 4;
  return open;
}

void BM_EncodeOpen(benchmark::State& state) {
  wire::Open open = sample_open();
  for (auto _ : state) benchmark::DoNotOptimize(wire::encode(open));
}
BENCHMARK(BM_EncodeOpen);

void BM_DecodeOpen(benchmark::State& state) {
  auto bytes = wire::encode(sample_open());
  for (auto _ : state) {
    wire::FrameHeader h;
    wire::decode_header(bytes, h);
    wire::Message m;
    wire::decode_message(h, std::span(bytes).subspan(wire::header_size), m);
    benchmark::DoNotOptimize(m);
  }
}
BENCHMARK(BM_DecodeOpen);

void BM_BlockHeaderRoundTrip(benchmark::State& state) {
  wire::BlockHeader b{123ull << 22, 4 << 20, 0, 4 << 20};
  for (auto _ : state) {
    auto bytes = wire::encode_block_header(b);
    wire::FrameHeader h;
    wire::decode_header(bytes, h);
    wire::BlockHeader out;
    wire::decode_block_header(h, std::span(bytes).subspan(wire::header_size), out);
    benchmark::DoNotOptimize(out);
  }
}
BENCHMARK(BM_BlockHeaderRoundTrip);

// adler32_of: AVX-512 VNNI where the CPU has it (checksum/adler32_simd.cpp), else ISA-L.
void BM_Adler32(benchmark::State& state) {
  auto data = random_bytes(static_cast<std::size_t>(state.range(0)));
  for (auto _ : state) benchmark::DoNotOptimize(adler32_of(data));
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * state.range(0));
}
BENCHMARK(BM_Adler32)->Arg(64 << 10)->Arg(4 << 20);

void BM_Adler32_isal(benchmark::State& state) {
  auto data = random_bytes(static_cast<std::size_t>(state.range(0)));
  for (auto _ : state) benchmark::DoNotOptimize(adler32_isal(1, data.data(), data.size()));
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * state.range(0));
}
BENCHMARK(BM_Adler32_isal)->Arg(64 << 10)->Arg(4 << 20);

void BM_Adler32_zlib(benchmark::State& state) {
  auto data = random_bytes(static_cast<std::size_t>(state.range(0)));
  for (auto _ : state) benchmark::DoNotOptimize(adler32(1, data.data(), static_cast<uInt>(data.size())));
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * state.range(0));
}
BENCHMARK(BM_Adler32_zlib)->Arg(4 << 20);

void BM_Sha256(benchmark::State& state) {
  auto data = random_bytes(static_cast<std::size_t>(state.range(0)));
  for (auto _ : state) {
    auto d = FileDigest::create(ChecksumAlgo::sha256, data.size(), static_cast<std::uint32_t>(data.size()), nullptr);
    d->add_block(0, data);
    benchmark::DoNotOptimize(d->finish());
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * state.range(0));
}
BENCHMARK(BM_Sha256)->Arg(4 << 20);

// The per-block MAC of authenticated data streams (issue 11) as the engine computes it (BlockMac:
// Poly1305 under a one-time key per block), fed in 256 KiB chunks (bench/results/auth-cost.md).
void BM_BlockMac(benchmark::State& state) {
  auto data = random_bytes(static_cast<std::size_t>(state.range(0)));
  MacKey key{};
  key.fill(7);
  BlockMac mac(key);
  std::array<std::uint8_t, 24> headers{};
  for (auto _ : state) {
    mac.begin(headers);
    for (std::size_t done = 0; done < data.size(); done += 256 * 1024)
      mac.update(std::span(data).subspan(done, std::min<std::size_t>(256 * 1024, data.size() - done)));
    benchmark::DoNotOptimize(mac.finish());
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * state.range(0));
}
BENCHMARK(BM_BlockMac)->Arg(2 << 20);

// The same without the 24 header bytes first: what an unaligned start costs Poly1305.
void BM_BlockMacPayloadOnly(benchmark::State& state) {
  auto data = random_bytes(static_cast<std::size_t>(state.range(0)));
  MacKey key{};
  key.fill(7);
  BlockMac mac(key);
  for (auto _ : state) {
    mac.begin({});
    for (std::size_t done = 0; done < data.size(); done += 256 * 1024)
      mac.update(std::span(data).subspan(done, std::min<std::size_t>(256 * 1024, data.size() - done)));
    benchmark::DoNotOptimize(mac.finish());
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * state.range(0));
}
BENCHMARK(BM_BlockMacPayloadOnly)->Arg(2 << 20);

// The alternative measured against it: AES-256-GMAC (GCM with everything as AAD) through EVP.
void BM_BlockGmac(benchmark::State& state) {
  auto data = random_bytes(static_cast<std::size_t>(state.range(0)));
  std::array<std::uint8_t, 32> key{};
  std::array<std::uint8_t, 12> iv{};
  std::array<std::uint8_t, 16> tag{};
  std::uint8_t unused[32];
  EVP_CIPHER_CTX* ctx = EVP_CIPHER_CTX_new();
  EVP_EncryptInit_ex(ctx, EVP_aes_256_gcm(), nullptr, key.data(), nullptr);
  for (auto _ : state) {
    ++iv[11];
    int n = 0;
    EVP_EncryptInit_ex(ctx, nullptr, nullptr, nullptr, iv.data());
    for (std::size_t done = 0; done < data.size(); done += 256 * 1024)
      EVP_EncryptUpdate(ctx, nullptr, &n, data.data() + done,
                        static_cast<int>(std::min<std::size_t>(256 * 1024, data.size() - done)));
    EVP_EncryptFinal_ex(ctx, unused, &n);
    EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG, 16, tag.data());
    benchmark::DoNotOptimize(tag);
  }
  EVP_CIPHER_CTX_free(ctx);
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * state.range(0));
}
BENCHMARK(BM_BlockGmac)->Arg(2 << 20);

// Poly1305 alone through EVP_MAC, one fixed key (BM_BlockMac adds the per-block key).
void BM_BlockPoly1305(benchmark::State& state) {
  auto data = random_bytes(static_cast<std::size_t>(state.range(0)));
  std::array<std::uint8_t, 32> key{};
  key.fill(9);
  EVP_MAC* mac = EVP_MAC_fetch(nullptr, "POLY1305", nullptr);
  if (!mac) {
    state.SkipWithError("no POLY1305 in this OpenSSL");
    return;
  }
  EVP_MAC_CTX* ctx = EVP_MAC_CTX_new(mac);
  std::array<std::uint8_t, 16> tag{};
  for (auto _ : state) {
    EVP_MAC_init(ctx, key.data(), key.size(), nullptr);
    for (std::size_t done = 0; done < data.size(); done += 256 * 1024)
      EVP_MAC_update(ctx, data.data() + done, std::min<std::size_t>(256 * 1024, data.size() - done));
    std::size_t n = 0;
    EVP_MAC_final(ctx, tag.data(), &n, tag.size());
    benchmark::DoNotOptimize(tag);
  }
  EVP_MAC_CTX_free(ctx);
  EVP_MAC_free(mac);
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * state.range(0));
}
BENCHMARK(BM_BlockPoly1305)->Arg(2 << 20);

// --- loopback transfers -----------------------------------------------------------------------

constexpr std::uint64_t transfer_bytes = 256ull << 20;

// One server and one source file for all transfer benchmarks, in /dev/shm when there is one so
// the disk is not what is measured.
struct LoopbackFixture {
  fs::path dir;
  std::unique_ptr<Server> server;
  std::thread thread;

  LoopbackFixture() {
    spdlog::set_level(spdlog::level::warn);  // one log line per transfer would drown the table
    fs::path base = fs::exists("/dev/shm") ? fs::path("/dev/shm") : fs::temp_directory_path();
    dir = base / ("pxfer-bench-" + std::to_string(::getpid()));
    fs::create_directories(dir / "root");
    auto data = random_bytes(1 << 20);
    std::ofstream out(dir / "source.bin", std::ios::binary);
    for (std::uint64_t i = 0; i < transfer_bytes >> 20; ++i) out.write(reinterpret_cast<char*>(data.data()), data.size());
    out.close();
    ServerOptions opt;
    opt.root = (dir / "root").string();
    opt.listen = Endpoint{"127.0.0.1", 0};
    opt.insecure_no_auth = true;  // loopback only
    opt.state_dir = (dir / "state").string();
    server = std::make_unique<Server>(opt);
    ClientSecurity security;
    security.fingerprint = server->fingerprint();
    set_client_security(security);
    thread = std::thread([this] { server->run(); });
  }
  ~LoopbackFixture() {
    server->stop();
    thread.join();
    fs::remove_all(dir);
  }
  static LoopbackFixture& get() {
    static LoopbackFixture f;
    return f;
  }
};

void BM_RawLoopbackTcp(benchmark::State& state) {
  for (auto _ : state) state.SetIterationTime(bench::raw_loopback_copy(transfer_bytes));
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * transfer_bytes));
}
BENCHMARK(BM_RawLoopbackTcp)->UseManualTime()->Unit(benchmark::kMillisecond);

void transfer_bench(benchmark::State& state, Direction direction) {
  auto& f = LoopbackFixture::get();
  ClientOptions opt;
  opt.streams = static_cast<std::uint16_t>(state.range(0));
  opt.overwrite = true;
  opt.perf_interval = std::chrono::milliseconds(0);
  Url url{"127.0.0.1", f.server->port(), "bench.bin", false};
  if (direction == Direction::get) put_file((f.dir / "source.bin").string(), url, opt);
  for (auto _ : state) {
    auto summary = direction == Direction::put ? put_file((f.dir / "source.bin").string(), url, opt)
                                               : get_file(url, (f.dir / "fetched.bin").string(), opt);
    state.SetIterationTime(summary.seconds);
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * transfer_bytes));
}

void BM_LoopbackPut(benchmark::State& state) { transfer_bench(state, Direction::put); }
void BM_LoopbackGet(benchmark::State& state) { transfer_bench(state, Direction::get); }
BENCHMARK(BM_LoopbackPut)->Arg(1)->Arg(4)->Arg(8)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_LoopbackGet)->Arg(1)->Arg(4)->Arg(8)->UseManualTime()->Unit(benchmark::kMillisecond);

// --- many small files: the per-file cost (control round trips, temporary file, fsync, rename) --

constexpr int small_files = 200;
constexpr std::size_t small_file_bytes = 64 * 1024;

// The tree put by BM_SmallFilesPut and fetched by BM_SmallFilesGet: 200 x 64 KiB, made once.
fs::path small_tree(LoopbackFixture& f) {
  fs::path tree = f.dir / "small";
  if (fs::exists(tree)) return tree;
  fs::create_directories(tree);
  auto data = random_bytes(small_file_bytes);
  for (int i = 0; i < small_files; ++i) {
    data[0] = static_cast<std::uint8_t>(i);  // different files, different checksums
    std::ofstream out(tree / std::string("f").append(std::to_string(i)), std::ios::binary);
    out.write(reinterpret_cast<const char*>(data.data()), static_cast<std::streamsize>(data.size()));
  }
  return tree;
}

void small_files_bench(benchmark::State& state, Direction direction) {
  auto& f = LoopbackFixture::get();
  fs::path tree = small_tree(f);
  BatchOptions opt;
  opt.client.perf_interval = std::chrono::milliseconds(0);
  opt.concurrency = static_cast<unsigned>(state.range(0));
  ProgressListener quiet;
  Url remote{"127.0.0.1", f.server->port(), "small", false};
  auto put_plan = [&] { return plan_recursive_put(tree.string(), remote); };
  if (direction == Direction::get) {
    fs::remove_all(f.dir / "root" / "small");
    run_batch(put_plan(), opt, quiet);
  }
  for (auto _ : state) {
    state.PauseTiming();
    fs::remove_all(direction == Direction::put ? f.dir / "root" / "small" : f.dir / "fetched-small");
    BatchPlan plan = direction == Direction::put
                         ? put_plan()
                         : plan_recursive_get(remote, (f.dir / "fetched-small").string(), std::chrono::seconds(10));
    state.ResumeTiming();
    BatchReport report = run_batch(plan, opt, quiet);
    if (report.failed > 0 || report.files.size() != static_cast<std::size_t>(small_files)) {
      state.SkipWithError("a small file failed");
      break;
    }
    state.SetIterationTime(report.seconds);
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * small_files * small_file_bytes);
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * small_files);  // files/s
}

void BM_SmallFilesPut(benchmark::State& state) { small_files_bench(state, Direction::put); }
void BM_SmallFilesGet(benchmark::State& state) { small_files_bench(state, Direction::get); }
BENCHMARK(BM_SmallFilesPut)->Arg(8)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_SmallFilesGet)->Arg(8)->UseManualTime()->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
