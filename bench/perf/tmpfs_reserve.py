#!/usr/bin/env python3
"""What reserving a file costs on tmpfs, with memory warmed: 1 GiB into a new /dev/shm file in 1 MiB
pwrites, after posix_fallocate or after ftruncate only; wall of each step and CPU of the whole
(docs/performance.md section 17).

  python3 bench/perf/tmpfs_reserve.py
"""
import os, time, mmap
N = 1 << 30; chunk = b'\x5a' * (1 << 20)
def warm():
    m = mmap.mmap(-1, N + (256<<20)); 
    for off in range(0, len(m), 4096): m[off] = 1
    m.close()
for r in range(3):
  for mode in ("fallocate", "ftruncate"):
    warm()
    fd = os.open('/dev/shm/fa.bin', os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o600)
    c0 = os.times(); t0 = time.perf_counter()
    os.posix_fallocate(fd, 0, N) if mode == "fallocate" else os.ftruncate(fd, N)
    t1 = time.perf_counter()
    for off in range(0, N, 1 << 20): os.pwrite(fd, chunk, off)
    c1 = os.times()
    print(mode, "reserve %.3f write %.3f cpu %.3f" % (t1 - t0, time.perf_counter() - t1, (c1.user+c1.system)-(c0.user+c0.system))); os.close(fd); os.unlink('/dev/shm/fa.bin')
