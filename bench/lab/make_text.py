#!/usr/bin/env python3
"""make_text.py SIZE_MIB PATH: a compressible file, as log and CSV files are (about 2.6x with
zstd -1): CSV lines of event records with a few random fields, seeded, so every run gets the same
bytes. An 8 MiB chunk is generated once and repeated; pxfer compresses each block on its own, so
the repetition does not help the compressor."""
import random
import sys

size = int(sys.argv[1]) << 20
rng = random.Random(20130220)
lines = []
n = 0
chunk_size = 8 << 20
while n < chunk_size:
    line = "%d,%d,%s,%.4f,%.4f,%.4f,%.3f,%s\n" % (
        200000 + rng.randrange(2000), rng.randrange(10**7),
        rng.choice(("DATADISK", "SCRATCHDISK", "LOCALGROUPDISK", "TAPE")),
        rng.gauss(0, 25), rng.gauss(0, 25), rng.gauss(0, 80), rng.expovariate(0.02),
        rng.choice(("ok", "ok", "ok", "retry", "failed")))
    lines.append(line)
    n += len(line)
chunk = "".join(lines).encode()[:chunk_size]
with open(sys.argv[2], "wb") as f:
    left = size
    while left > 0:
        f.write(chunk[:left])
        left -= len(chunk)
