#!/usr/bin/env bash
# bench/perf/pinned_get_server_profile.sh [A_BIN] [B_BIN]: `perf record -e cpu-clock -F 999 -g` of each
# build's pxferd (pinned to CPU 0; pxfer on CPU 1) while it SENDS a 4-stream get of 1 GiB in /dev/shm,
# after one unrecorded round, memory warmed before each run: /tmp/pg-srv-a.data and /tmp/pg-srv-b.data
# (docs/performance.md section 24: page faults, munmap and Poly1305 of the sender). Read with
# `perf report -i FILE --children --sort sym -g none`. Defaults: /tmp/clear-bin and build/bin.
set -euo pipefail
A=$(cd "${1:-/tmp/clear-bin}" && pwd); Bb=$(cd "${2:-build/bin}" && pwd); here=$(cd "$(dirname "$0")" && pwd)
W=$(mktemp -d /dev/shm/pp.XXXX); trap 'kill $(cat $W/pid*) 2>/dev/null; rm -rf $W' EXIT
head -c 1G /dev/urandom > $W/big.bin
export PXFER_KNOWN_HOSTS=$W/kh
for s in a b; do B=$([ $s = a ] && echo $A || echo $Bb); mkdir -p $W/$s/root
  taskset -c 0 $B/pxferd --root $W/$s/root --listen 127.0.0.1:0 --insecure-no-auth --state-dir $W/$s/st --port-file $W/$s/port 2>/dev/null & echo $! > $W/pid$s
done
sleep 0.5
for r in 1 2; do for s in a b; do B=$([ $s = a ] && echo $A || echo $Bb); u=pxfer://127.0.0.1:$(cat $W/$s/port)
  rm -f $W/$s/got.bin; cp -n $W/big.bin $W/$s/root/big.bin; python3 $here/warm_memory.py $((1280<<20))
  if [ $r = 2 ]; then perf record -q -e cpu-clock -F 999 -g -o /tmp/pg-srv-$s.data -p $(cat $W/pid$s) 2>/dev/null & pp=$!; sleep 0.3; fi
  /usr/bin/time -f "$s %e" taskset -c 1 $B/pxfer get -q -p 4 $u/big.bin $W/$s/got.bin 2>&1 | grep -v warning | tail -1
  if [ $r = 2 ]; then sleep 0.2; kill -INT $pp; wait $pp || true; fi
done; done
