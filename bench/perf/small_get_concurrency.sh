#!/usr/bin/env bash
# bench/perf/small_get_concurrency.sh: get -r of 20 x 500 x 64 KiB (the layout of bench/compare.sh) from one
# pxferd --insecure-no-auth, -c for each of CS (default "4 8"), R rounds, memory warmed before each run;
# prints wall, client user and system seconds and pxferd ticks (docs/performance.md section 24). B=BIN_DIR.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd); B=${B:-$here/../../build/bin}; rounds=${R:-4}; cs=${CS:-"4 8"}
w=$(mktemp -d /dev/shm/cv2.XXXXXX); trap 'kill $sp 2>/dev/null; rm -rf $w' EXIT
mkdir -p $w/root/tree $w/out
python3 - $w <<'P'
import os,sys
w=sys.argv[1]
for i in range(10000):
    d=f"{w}/root/tree/{i//500:03d}"; os.makedirs(d,exist_ok=True)
    open(f"{d}/f{i:06d}","wb").write(os.urandom(65536))
P
export PXFER_KNOWN_HOSTS=$w/kh
$B/pxferd --root $w/root --listen 127.0.0.1:0 --insecure-no-auth --state-dir $w/st --port-file $w/port 2>/dev/null & sp=$!
for _ in $(seq 100); do [ -s $w/port ] && break; sleep 0.05; done
u=pxfer://127.0.0.1:$(cat $w/port)
$B/pxfer get -q -r -c 8 $u/tree $w/out/t 2>/dev/null; rm -rf $w/out/*
for r in $(seq $rounds); do for c in $cs; do
  python3 "$here/warm_memory.py" $((10000*65536*2+(256<<20)))
  t0=$(awk '{print $14+$15}' /proc/$sp/stat)
  x=$( { /usr/bin/time -f "%e %U %S" ${BC:-$B}/pxfer get -q -r -c $c ${EXTRA:-} $u/tree $w/out/t ; } 2>&1 | tail -1)
  t1=$(awk '{print $14+$15}' /proc/$sp/stat)
  echo "r$r c$c $x srv $((t1-t0))"; rm -rf $w/out/*
done; done
