#!/usr/bin/env python3
"""What committing small files costs on a file system, by the order of the calls (docs/performance.md
section 15): N files of 64 KiB written into DIR (default /var/tmp, ext4 here) in each mode, ROUNDS
rounds, every run in a fresh directory (ext4 allocates inodes slowly for ~30 s after many
deletions, so the runs' trees are removed only at the end).

  perfile: each file alone: write, fdatasync, rename, fsync of the directory (pxfer before 12.3)
  group:   groups of 64: write + sync_file_range(WRITE) each, then fdatasync each, rename each,
           one directory fsync (io/commit_group.cpp)
  fds:     the same without the early write-back
  syncfs:  groups of 64: write each, syncfs, rename each, syncfs
  none:    write and rename, nothing made durable (for scale)

  python3 bench/perf/commit_order.py [DIR] [N] [ROUNDS]
"""
import ctypes, os, shutil, sys, tempfile, time

base = sys.argv[1] if len(sys.argv) > 1 else "/var/tmp"
n = int(sys.argv[2]) if len(sys.argv) > 2 else 2000
rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 3
libc = ctypes.CDLL(None, use_errno=True)
SYNC_FILE_RANGE_WRITE = 2
data = os.urandom(65536)
work = tempfile.mkdtemp(prefix="commit-order.", dir=base)


def run(mode, d, batch=64):
    os.makedirs(d)
    dfd = os.open(d, os.O_RDONLY)
    t = time.perf_counter()
    for b in range(0, n, batch):
        group = []
        for i in range(b, min(n, b + batch)):
            fd = os.open(f"{d}/.f{i}.tmp", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
            os.write(fd, data)
            if mode == "perfile":
                os.fdatasync(fd)
                os.close(fd)
                os.rename(f"{d}/.f{i}.tmp", f"{d}/f{i}")
                os.fsync(dfd)
                continue
            if mode == "group":
                libc.sync_file_range(fd, ctypes.c_longlong(0), ctypes.c_longlong(0), SYNC_FILE_RANGE_WRITE)
            group.append((i, fd))
        if mode in ("group", "fds"):
            for _, fd in group:
                os.fdatasync(fd)
        elif mode == "syncfs":
            libc.syncfs(dfd)
        for i, fd in group:
            os.close(fd)
            os.rename(f"{d}/.f{i}.tmp", f"{d}/f{i}")
        if mode in ("group", "fds"):
            os.fsync(dfd)
        elif mode == "syncfs":
            libc.syncfs(dfd)
    elapsed = time.perf_counter() - t
    os.close(dfd)
    return elapsed


try:
    modes = ("perfile", "group", "fds", "syncfs", "none")
    results = {m: [] for m in modes}
    for r in range(rounds):
        for m in modes:
            results[m].append(run(m, f"{work}/{m}-{r}"))
    print(f"{n} x 64 KiB into {base} ({rounds} rounds), seconds:")
    for m in modes:
        v = sorted(results[m])
        print(f"  {m:8} {v[0]:.2f}-{v[-1]:.2f} (median {v[len(v) // 2]:.2f})")
finally:
    shutil.rmtree(work, ignore_errors=True)
