#!/usr/bin/env bash
# bench/perf/get_streams.sh: 1 GiB get from one pxferd --insecure-no-auth with each of VARIANTS (pxfer options,
# "_" for a space, e.g. VARIANTS="-p_2 -p_4 -p_8"), R rounds, memory warmed before each run; ENC=--encrypt
# for encrypted streams. Prints wall, client user and system seconds and pxferd ticks (docs/performance.md section 24).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd); B=${B:-$here/../../build/bin}; rounds=${R:-3}
w=$(mktemp -d /dev/shm/ev.XXXXXX); trap 'kill $sp 2>/dev/null; rm -rf $w' EXIT
mkdir -p $w/root $w/out; head -c 1G /dev/urandom > $w/root/big.bin
export PXFER_KNOWN_HOSTS=$w/kh
$B/pxferd --root $w/root --listen 127.0.0.1:0 --insecure-no-auth --state-dir $w/st --port-file $w/port 2>/dev/null & sp=$!
for _ in $(seq 100); do [ -s $w/port ] && break; sleep 0.05; done
u=pxfer://127.0.0.1:$(cat $w/port)
$B/pxfer get -q -p 4 ${ENC:-} $u/big.bin $w/out/x 2>/dev/null; rm -f $w/out/*
for r in $(seq $rounds); do for v in ${VARIANTS:-"-p4"}; do
  python3 "$here/warm_memory.py" $((1280<<20))
  opts=${v//_/ }
  t0=$(awk '{print $14+$15}' /proc/$sp/stat)
  x=$( { /usr/bin/time -f "%e %U %S" $B/pxfer get -q ${ENC:-} ${opts} $u/big.bin $w/out/x ; } 2>&1 | tail -1)
  t1=$(awk '{print $14+$15}' /proc/$sp/stat)
  echo "r$r $v $x srv $((t1-t0))"; rm -f $w/out/*
done; done
