#!/usr/bin/env bash
# bench/perf/profile_small.sh put|get [N] [BIN_DIR] [SIZE]: `perf record -e cpu-clock -F ${PXPROF_FREQ:-999} -g` of
# both ends of one `put -r -c 8` or `get -r -c 8` of N files of SIZE bytes (default 65536) in /dev/shm (memory warmed, one
# warm-up run first): /tmp/perf-srv-s$OP.data (pxferd) and /tmp/perf-cli-s$OP.data (pxfer). Read
# them with `perf report -i FILE --no-children --sort sym` (docs/performance.md section 18; add
# `--call-graph dwarf` to the pxferd record for callers inside libc).
set -euo pipefail
op=$1; n=${2:-10000}; B=${3:-build/bin}; B=$(cd "$B" && pwd); size=${4:-65536}; here=$(cd "$(dirname "$0")" && pwd)
w=$(mktemp -d /dev/shm/profs.XXXXXX); sp=; trap '[ -n "$sp" ] && kill $sp 2>/dev/null; rm -rf $w' EXIT
mkdir -p $w/root/src $w/client $w/local
python3 - $w $n $size <<'P'
import os,sys
w,n,size=sys.argv[1],int(sys.argv[2]),int(sys.argv[3])
for i in range(n):
    b=os.urandom(size)
    open(f"{w}/root/src/f{i:05d}","wb").write(b); open(f"{w}/local/f{i:05d}","wb").write(b)
P
export PXFER_KNOWN_HOSTS=$w/kh
# shellcheck source=bench/lab/lib.sh
source "$here/../lab/lib.sh"
lab_loopback_server "$B" "$w"; sp=$LAB_LOOPBACK_PID; u=$LAB_LOOPBACK_URL
run() { if [ $op = put ]; then $B/pxfer put -r -c 8 -p 4 $w/local $u/dst; else $B/pxfer get -r -c 8 -p 4 $u/src $w/client/out; fi; }
clean() { rm -rf $w/root/dst $w/client/out; }
run > /dev/null 2>&1; clean
python3 "$here/warm_memory.py" $((n * size * 2 + (256 << 20)))
perf record -e cpu-clock -F ${PXPROF_FREQ:-999} ${PXPROF_SRV_GRAPH:--g} -o /tmp/perf-srv-s$op.data -p $sp 2>/dev/null & pp=$!
sleep 0.5
perf record -e cpu-clock -F ${PXPROF_FREQ:-999} -g -o /tmp/perf-cli-s$op.data -- bash -c "$(declare -f run); op=$op B=$B w=$w u=$u run" 2>/dev/null | tail -1
kill -INT $pp; wait $pp || true
