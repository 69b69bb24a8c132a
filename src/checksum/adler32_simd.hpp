#pragma once
// Adler-32 (RFC 1950) of `size` bytes continuing from `start` (1 for a new sum): AVX-512 VNNI where
// the CPU has it, else ISA-L's routine (adler32_simd.cpp). adler32_of (pxfer/core/checksum.hpp) calls it.
#include "pxfer/core/layer.hpp"
#include <cstddef>
#include <cstdint>

namespace pxfer {

std::uint32_t adler32_simd(std::uint32_t start, const std::uint8_t* data, std::size_t size);

// ISA-L's routine alone: what adler32_simd falls back to, for tests and pxfer-bench.
std::uint32_t adler32_isal(std::uint32_t start, const std::uint8_t* data, std::size_t size);

// Whether adler32_simd runs the AVX-512 routine on this CPU (tests say which path they checked).
bool adler32_simd_in_use();

}  // namespace pxfer
