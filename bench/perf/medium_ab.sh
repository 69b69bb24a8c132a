#!/usr/bin/env bash
# bench/perf/medium_ab.sh A_BIN B_BIN [ROUNDS] [COUNT] [SIZE] [STREAMS] [FILES_AT_ONCE]: two builds
# side by side on a tree of COUNT files of SIZE (`put -r` then `get -r`, -p STREAMS -c FILES_AT_ONCE),
# each build against its own pxferd without authentication, in /dev/shm, memory warmed before
# every run, the builds' order turned each round. Prints per run the wall time, the client's CPU
# (user+sys, s) and its pxferd's CPU (ticks of 10 ms), then medians (docs/performance.md section 20).
set -euo pipefail
A=$(cd "$1" && pwd); B=$(cd "$2" && pwd); rounds=${3:-6}; count=${4:-300}; size=${5:-4M}; p=${6:-4}; c=${7:-8}
here=$(cd "$(dirname "$0")" && pwd)
work="$(mktemp -d /dev/shm/pxfer-mab.XXXXXX)"; pids=""
trap 'kill $pids 2>/dev/null; rm -rf "$work"' EXIT
mkdir -p "$work/tree"
for i in $(seq "$count"); do head -c "$size" /dev/urandom > "$work/tree/m$i"; done
export PXFER_KNOWN_HOSTS="$work/known_hosts"
declare -A url pid
for x in A B; do
  bin=${!x}; mkdir -p "$work/$x/root" "$work/$x/cli"
  "$bin/pxferd" --root "$work/$x/root" --listen 127.0.0.1:0 --insecure-no-auth --state-dir "$work/$x/state" \
    --port-file "$work/$x/port" 2>/dev/null & pid[$x]=$!; pids="$pids $!"
  for _ in $(seq 100); do [ -s "$work/$x/port" ] && break; sleep 0.05; done
  url[$x]="pxfer://127.0.0.1:$(cat "$work/$x/port")"
done
bytes=$(du -sb "$work/tree" | cut -f1)
ticks() { awk '{print $14+$15}' "/proc/$1/stat"; }
# One run: "wall client_cpu server_ticks"
run() {
  local x=$1; shift
  python3 "$here/warm_memory.py" $((bytes + (256 << 20)))
  local t0; t0=$(ticks "${pid[$x]}")
  local out; out=$(/usr/bin/time -f "%e %U %S" "$@" 2>&1 >/dev/null | grep -v warning | tail -1)
  local t1; t1=$(ticks "${pid[$x]}")
  awk -v o="$out" -v s=$((t1 - t0)) 'BEGIN{split(o,a," "); printf "%.2f %.2f %d", a[1], a[2]+a[3], s}'
}
echo "# $count x $size, -p $p -c $c; A=$A B=$B"
echo "# round build put(wall cpu ticks) get(wall cpu ticks)"
for r in $(seq "$rounds"); do
  order="A B"; [ $((r % 2)) = 0 ] && order="B A"
  for x in $order; do
    bin=${!x}; rm -rf "$work/$x/root/"* "$work/$x/cli/"*
    tp=$(run $x "$bin/pxfer" put -q -r -c "$c" -p "$p" "$work/tree" "${url[$x]}/tree")
    tg=$(run $x "$bin/pxfer" get -q -r -c "$c" -p "$p" "${url[$x]}/tree" "$work/$x/cli/")
    echo "$r $x $tp $tg"
  done
done | tee "$work/runs"
python3 - "$work/runs" <<'P'
import sys, statistics as st
rows=[l.split() for l in open(sys.argv[1]) if not l.startswith('#')]
for x in "AB":
    r=[list(map(float,row[2:])) for row in rows if row[1]==x]
    m=[st.median(c) for c in zip(*r)]
    print(f"{x} medians: put {m[0]:.2f} s, client {m[1]:.2f} s CPU, pxferd {m[2]:.0f} ticks | get {m[3]:.2f} s, client {m[4]:.2f} s CPU, pxferd {m[5]:.0f} ticks")
P
