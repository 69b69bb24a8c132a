#!/usr/bin/env python3
"""bench/perf/cold_memory.py ROUNDS: 2 GiB written into a fresh /dev/shm file in 1 MiB pwrites, with
and without touching (and freeing) 2.25 GiB of anonymous memory just before; 3 s of rest before
each write lets the guest report the memory freed by the previous one to its host
(docs/performance.md section 12)."""
import os, time, mmap, sys
N = 2 << 30; chunk = b'\x5a' * (1 << 20)
def write(path):
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    t0 = time.perf_counter()
    for off in range(0, N, 1 << 20): os.pwrite(fd, chunk, off)
    os.close(fd); return time.perf_counter() - t0
def pretouch(n):
    m = mmap.mmap(-1, n, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    for off in range(0, n, 4096): m[off] = 1
    m.close()
for r in range(int(sys.argv[1])):
    for mode in ("plain", "pretouch"):
        if os.path.exists('/dev/shm/tt.bin'): os.unlink('/dev/shm/tt.bin')
        time.sleep(3)  # let the freed memory be reported
        t0 = time.perf_counter()
        if mode == "pretouch": pretouch(N + (256 << 20))
        tp = time.perf_counter() - t0
        w = write('/dev/shm/tt.bin')
        print(f"round {r} {mode}: pretouch {tp:.2f} s, write 2 GiB {w:.2f} s = {N/w/1e6:.0f} MB/s", flush=True)
os.unlink('/dev/shm/tt.bin')
