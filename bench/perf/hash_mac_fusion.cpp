// Adler-32 (ISA-L) and Poly1305 (OpenSSL EVP_MAC) over the same 2 MiB block in 256 KiB pieces,
// one after the other per piece or interleaved in L1-sized sub-pieces (docs/performance.md, section 6):
// g++ -O2 -o hash_mac_fusion bench/perf/hash_mac_fusion.cpp -lisal -lcrypto
#include <isa-l.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <chrono>
#include <cstdio>
#include <cstdint>
#include <vector>
#include <algorithm>
int main() {
  const size_t block = 2 << 20, piece = 256 << 10;
  std::vector<uint8_t> buf(block); for (size_t i = 0; i < block; ++i) buf[i] = uint8_t(i * 131 + 7);
  EVP_MAC* mac = EVP_MAC_fetch(nullptr, "POLY1305", nullptr); EVP_MAC_CTX* ctx = EVP_MAC_CTX_new(mac);
  uint8_t key[32] = {1}; uint8_t tag[16]; size_t n;
  for (size_t sub : {size_t(256 << 10), size_t(64 << 10), size_t(32 << 10), size_t(16 << 10), size_t(8 << 10)}) {
    double best = 1e9;
    for (int rep = 0; rep < 7; ++rep) {
      auto t0 = std::chrono::steady_clock::now();
      uint32_t a = 1;
      for (int it = 0; it < 256; ++it) {  // 512 MiB
        EVP_MAC_init(ctx, key, 32, nullptr);
        for (size_t off = 0; off < block; off += piece)
          for (size_t s = off; s < off + piece; s += sub) {
            a = isal_adler32(a, buf.data() + s, sub);
            EVP_MAC_update(ctx, buf.data() + s, sub);
          }
        EVP_MAC_final(ctx, tag, &n, 16);
      }
      double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      best = std::min(best, t);
      if (a == 42) std::puts("");
    }
    std::printf("sub-piece %6zu KiB: adler32+poly1305 %.3f s per 512 MiB = %.1f GB/s\n", sub >> 10, best, 512.0 * (1 << 20) / best / 1e9);
  }
}
