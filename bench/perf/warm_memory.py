#!/usr/bin/env python3
"""Touches BYTES of anonymous memory, one byte a page, and gives it back: this VM hands freed
memory to its host, and the first write to such a page faults there (docs/performance.md section
12). Run in a process of its own right before a measured run, as bench/compare.sh does.

  python3 bench/perf/warm_memory.py BYTES
"""
import mmap
import sys

n = int(sys.argv[1])
m = mmap.mmap(-1, n, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
for off in range(0, n, mmap.PAGESIZE):
    m[off] = 1
