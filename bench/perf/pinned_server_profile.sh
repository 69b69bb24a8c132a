#!/usr/bin/env bash
# bench/perf/pinned_server_profile.sh put|get [A_BIN] [B_BIN]: `perf record -e cpu-clock -F 999 -g` of
# each build's pxferd (pinned to CPU 0; pxfer on CPU 1) while it receives a 4-stream put or sends a
# 4-stream get of 1 GiB in /dev/shm, after one unrecorded round, memory warmed before each run.
# Writes /tmp/pp-a.data and /tmp/pp-b.data (put) or /tmp/pg-srv-a.data and /tmp/pg-srv-b.data (get):
# docs/performance.md sections 21 and 24; read with `perf report -i FILE --no-children --sort dso`
# or `--children --sort sym -g none`. Defaults: /tmp/clear-bin and build/bin.
set -euo pipefail
dir="$1"; [ "$dir" = put ] || [ "$dir" = get ] || { echo "usage: $0 put|get [A_BIN] [B_BIN]" >&2; exit 2; }
A=$(cd "${2:-/tmp/clear-bin}" && pwd); Bb=$(cd "${3:-build/bin}" && pwd); here=$(cd "$(dirname "$0")" && pwd)
out=/tmp/pp; [ "$dir" = get ] && out=/tmp/pg-srv
W=$(mktemp -d /dev/shm/pp.XXXX); trap 'kill $(cat $W/pid*) 2>/dev/null; rm -rf $W' EXIT
head -c 1G /dev/urandom > $W/big.bin
export PXFER_KNOWN_HOSTS=$W/kh
for s in a b; do B=$([ $s = a ] && echo $A || echo $Bb); mkdir -p $W/$s/root
  taskset -c 0 $B/pxferd --root $W/$s/root --listen 127.0.0.1:0 --insecure-no-auth --state-dir $W/$s/st --port-file $W/$s/port 2>/dev/null & echo $! > $W/pid$s
done
sleep 0.5
for r in 1 2; do for s in a b; do B=$([ $s = a ] && echo $A || echo $Bb); u=pxfer://127.0.0.1:$(cat $W/$s/port)
  if [ "$dir" = put ]; then rm -f $W/$s/root/*; else rm -f $W/$s/got.bin; cp -n $W/big.bin $W/$s/root/big.bin; fi
  python3 $here/warm_memory.py $((1280<<20))
  if [ $r = 2 ]; then perf record -q -e cpu-clock -F 999 -g -o $out-$s.data -p $(cat $W/pid$s) 2>/dev/null & pp=$!; sleep 0.3; fi
  if [ "$dir" = put ]; then args=(put -q -p 4 $W/big.bin $u/big.bin); else args=(get -q -p 4 $u/big.bin $W/$s/got.bin); fi
  /usr/bin/time -f "$s %e" taskset -c 1 $B/pxfer "${args[@]}" 2>&1 | grep -v warning | tail -1
  if [ $r = 2 ]; then sleep 0.2; kill -INT $pp; wait $pp || true; fi
done; done
