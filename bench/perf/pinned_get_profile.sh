#!/usr/bin/env bash
# bench/perf/pinned_get_profile.sh BIN TAG [RUNS]: `perf record -e cpu-clock -F 1999 -g` of the
# receiving client of RUNS (default 3) 4-stream gets of 1 GiB in /dev/shm from BIN's pxferd, pxferd
# pinned to CPU 0 and pxfer to CPU 1, memory warmed before each run, after one unrecorded get:
# /tmp/pg-TAG.N.data. Read with `perf report -i FILE -n --no-children --sort sym -g none`
# (docs/performance.md section 23: run once per build, e.g. TAG a for the clear streams, b for HEAD).
set -euo pipefail
B=$(cd "$1" && pwd); tag=$2; runs=${3:-3}; here=$(cd "$(dirname "$0")" && pwd)
w=$(mktemp -d /dev/shm/pg.XXXX); sp=; trap '[ -n "$sp" ] && kill $sp 2>/dev/null; rm -rf $w' EXIT
mkdir -p $w/root $w/c; head -c 1G /dev/urandom > $w/root/big.bin
export PXFER_KNOWN_HOSTS=$w/kh
taskset -c 0 $B/pxferd --root $w/root --listen 127.0.0.1:0 --insecure-no-auth --state-dir $w/st --port-file $w/port 2>/dev/null & sp=$!
for _ in $(seq 100); do [ -s $w/port ] && break; sleep 0.05; done
u=pxfer://127.0.0.1:$(cat $w/port)
$B/pxfer get -q -p 4 $u/big.bin $w/c/x 2>/dev/null; rm -f $w/c/x
for i in $(seq $runs); do
  python3 "$here/warm_memory.py" $((1280 << 20))
  perf record -q -e cpu-clock -F 1999 -g -o /tmp/pg-$tag.$i.data taskset -c 1 $B/pxfer get -q -p 4 $u/big.bin $w/c/x 2>/dev/null
  rm -f $w/c/x
done
