#pragma once
// How pxfer and pxferd keep the memory they free, set once at the start of each.
#include <malloc.h>

namespace pxfer::cli {

// glibc hands the free top of a heap back to the kernel once it passes 128 KiB (it raises that
// only after a large mapped allocation is freed, which a run of small files never does), and
// every batch of small files frees its buffers (each file's bytes are read into one of their
// own): each batch then faulted its memory in again (page faults, brk and madvise ~6 % of pxferd
// serving a get -r of 64 KiB files). Kept up to 8 MiB a heap, it is reused: 10,000 x 64 KiB, get -r
// 49 -> 39 ticks of pxferd, put -r 0.41 -> 0.39 s of the client (docs/performance.md section 25).
// Allocations from 128 KiB up (block buffers, kept between transfers) are still mapped on their
// own, so what a long-running pxferd holds on to grows by at most 8 MiB a heap.
inline void keep_freed_memory() {
  ::mallopt(M_MMAP_THRESHOLD, 128 * 1024);
  ::mallopt(M_TRIM_THRESHOLD, 8 * 1024 * 1024);
}

}  // namespace pxfer::cli
