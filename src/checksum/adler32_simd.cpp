// Adler-32 with AVX-512 (VNNI): 95-120 GB/s against ISA-L's AVX2 routine's 14 GB/s on this
// project's machine (pxfer-bench BM_Adler32 and BM_Adler32_isal; docs/performance.md section 24). Every byte a transfer moves is
// summed once at each end, so this pass is a few per cent of a small-file run's CPU.
//
// The sums of one 64-byte chunk d[0..63], entered with (a, b), are
//   a' = a + sum(d[k])
//   b' = b + 64 a + sum((64 - k) d[k])
// so over m chunks, with P_j the bytes of the chunks before chunk j and W_j chunk j's weighted sum,
//   b' = b + 64 m a + 64 sum(P_j) + sum(W_j).
// The loop keeps sum(d) (vpsadbw, 64-bit lanes), sum(P_j) (the byte sums added up once per chunk,
// 64-bit lanes) and sum(W_j) (vpdpbusd against the weights 64..1, 32-bit lanes) in registers and
// reduces modulo 65521 once per segment. A segment of at most 64 KiB keeps every 32-bit lane of
// sum(W_j) below 2^31 (1024 chunks x 4 bytes x 255 x 64). The tail below 64 bytes is done a byte
// at a time; without AVX-512 VNNI the whole input goes to ISA-L.
#include <isa-l.h>

#include <cstddef>
#include <cstdint>

#include "checksum/adler32_simd.hpp"

#if defined(__x86_64__)
#include <immintrin.h>
#define PXFER_ADLER32_AVX512 1
#endif

namespace pxfer {
namespace {

#if PXFER_ADLER32_AVX512
constexpr std::uint32_t base = 65521;
constexpr std::size_t segment = 64 * 1024;

// The lanes added up through memory: once per 64 KiB, and GCC 12's reduce intrinsics warn
// (-Wmaybe-uninitialized inside their _mm512_undefined). Lane is std::uint64_t or std::uint32_t.
template <typename Lane>
__attribute__((target("avx512f"))) std::uint64_t lane_total(__m512i v) {
  alignas(64) Lane lane[64 / sizeof(Lane)];
  _mm512_store_si512(lane, v);
  std::uint64_t total = 0;
  for (Lane x : lane) total += x;
  return total;
}

__attribute__((target("avx512f,avx512bw,avx512vnni"))) std::uint32_t adler32_avx512(std::uint32_t adler,
                                                                                     const std::uint8_t* p,
                                                                                     std::size_t n) {
  std::uint64_t a = adler & 0xffff;
  std::uint64_t b = adler >> 16;
  alignas(64) static constexpr std::int8_t weights_bytes[64] = {
      64, 63, 62, 61, 60, 59, 58, 57, 56, 55, 54, 53, 52, 51, 50, 49, 48, 47, 46, 45, 44, 43,
      42, 41, 40, 39, 38, 37, 36, 35, 34, 33, 32, 31, 30, 29, 28, 27, 26, 25, 24, 23, 22, 21,
      20, 19, 18, 17, 16, 15, 14, 13, 12, 11, 10, 9,  8,  7,  6,  5,  4,  3,  2,  1};
  const __m512i weights = _mm512_load_si512(weights_bytes);
  const __m512i zero = _mm512_setzero_si512();
  while (n >= 64) {
    const std::size_t len = (n < segment ? n : segment) & ~std::size_t{63};
    __m512i sum = zero;       // sum(d): 8 lanes of 64 bits
    __m512i before = zero;    // sum(P_j): 8 lanes of 64 bits
    __m512i weighted0 = zero; // sum(W_j), even chunks: 16 lanes of 32 bits
    __m512i weighted1 = zero; // odd chunks: two chains, so vpdpbusd's latency overlaps
    std::size_t i = 0;
    for (; i + 128 <= len; i += 128) {
      const __m512i d0 = _mm512_loadu_si512(p + i);
      const __m512i d1 = _mm512_loadu_si512(p + i + 64);
      before = _mm512_add_epi64(before, sum);
      sum = _mm512_add_epi64(sum, _mm512_sad_epu8(d0, zero));
      weighted0 = _mm512_dpbusd_epi32(weighted0, d0, weights);
      before = _mm512_add_epi64(before, sum);
      sum = _mm512_add_epi64(sum, _mm512_sad_epu8(d1, zero));
      weighted1 = _mm512_dpbusd_epi32(weighted1, d1, weights);
    }
    if (i < len) {  // one chunk left
      const __m512i d0 = _mm512_loadu_si512(p + i);
      before = _mm512_add_epi64(before, sum);
      sum = _mm512_add_epi64(sum, _mm512_sad_epu8(d0, zero));
      weighted0 = _mm512_dpbusd_epi32(weighted0, d0, weights);
    }
    const std::uint64_t w = lane_total<std::uint32_t>(_mm512_add_epi32(weighted0, weighted1));  // below 2^31 per lane (above)
    const std::uint64_t s = lane_total<std::uint64_t>(sum);
    const std::uint64_t pj = lane_total<std::uint64_t>(before);
    b = (b + len * a + 64 * pj + w) % base;
    a = (a + s) % base;
    p += len;
    n -= len;
  }
  for (; n > 0; --n, ++p) {  // at most 63 bytes
    a += *p;
    b += a;
  }
  return static_cast<std::uint32_t>(((b % base) << 16) | (a % base));
}

bool has_avx512_vnni() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512vnni");
}
#endif

}  // namespace

bool adler32_simd_in_use() {
#if PXFER_ADLER32_AVX512
  static const bool vnni = has_avx512_vnni();  // asked once per process
  return vnni;
#else
  return false;
#endif
}

std::uint32_t adler32_simd(std::uint32_t start, const std::uint8_t* data, std::size_t size) {
#if PXFER_ADLER32_AVX512
  if (adler32_simd_in_use()) return adler32_avx512(start, data, size);
#endif
  return isal_adler32(start, data, size);
}

std::uint32_t adler32_isal(std::uint32_t start, const std::uint8_t* data, std::size_t size) {
  return isal_adler32(start, data, size);
}

}  // namespace pxfer
