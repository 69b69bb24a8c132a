#!/usr/bin/env bash
# bench/perf/small_ab.sh A_BIN B_BIN [ROUNDS] [COUNT]: COUNT x 64 KiB put -r then get -r (-c 8) per
# build, each pxfer against its own pxferd, rounds interleaved with the order turned each round;
# prints wall, client user and system seconds (/usr/bin/time) and pxferd CPU ticks (/proc/PID/stat)
# per run (docs/performance.md section 9). PXAB_DIR=/var/tmp puts the trees on a disk instead of
# /dev/shm (section 15: durability in groups). PXAB_PER_DIR=500 spreads the files over directories
# of that many each, as bench/compare.sh lays out its tree (section 25).
set -euo pipefail
a_bin="$1"; b_bin="$2"; rounds="${3:-5}"; count="${4:-2000}"
work="$(mktemp -d "${PXAB_DIR:-/dev/shm}/pxfer-sab.XXXXXX")"; pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true; rm -rf "$work"' EXIT
mkdir -p "$work/tree"
per_dir="${PXAB_PER_DIR:-0}"
for i in $(seq "$count"); do
  d="$work/tree"; [ "$per_dir" -gt 0 ] && d="$work/tree/$(printf %03d $(( (i - 1) / per_dir )))"
  [ -d "$d" ] || mkdir -p "$d"
  head -c 65536 /dev/urandom > "$d/f$i"
done
# shellcheck source=bench/perf/ab_servers.sh
source "$(dirname "${BASH_SOURCE[0]}")/ab_servers.sh"
for r in $(seq "$rounds"); do
  order="a b"; [ $((r % 2)) -eq 0 ] && order="b a"
  for side in $order; do
    bin_var="${side}_bin"; bin="${!bin_var}"; u="${url[$side]}"; c="$work/$side/client"
    # On a disk each run writes into a directory of its own, removed at the end: ext4 allocates
    # inodes slowly for ~30 s after 10,000 deletions (docs/performance.md section 15).
    if [ -n "${PXAB_DIR:-}" ]; then c="$c/r$r"; mkdir -p "$c"; sub="r$r/"; else rm -rf "$work/$side/root/"* "$c/"*; sub=""; fi
    t0=$(ticks ${spid[$side]})
    p=$( { /usr/bin/time -f "%e %U %S" "$bin/pxfer" put -q -r -c 8 "$work/tree" "$u/$sub" ; } 2>&1 | grep -v warning | tail -1)
    t1=$(ticks ${spid[$side]})
    g=$( { /usr/bin/time -f "%e %U %S" "$bin/pxfer" get -q -r -c 8 "$u/${sub}tree" "$c/" ; } 2>&1 | tail -1)
    t2=$(ticks ${spid[$side]})
    diff -rq "$work/tree" "$c/tree" >/dev/null || { echo "$side: tree differs" >&2; exit 1; }
    echo "$r $side put wall/user/sys $p server $((t1-t0)) | get $g server $((t2-t1))"
  done
done
