#!/usr/bin/env bash
# A/B comparison of two builds of pxfer on loopback, rounds interleaved so that drift hits both
# alike: a large file put and get, and a tree of small files put -r and get -r, each build's
# pxfer against its own pxferd. For refactors that must not cost speed (issue 10).
#   bench/ab.sh A_BIN_DIR B_BIN_DIR [ROUNDS] [SIZE] [SMALL_COUNT]
# Rounds interleaved, the order turned each round. Prints one line per run and the median MB/s of each build and their ratio B/A.
set -euo pipefail
a_bin="$1"; b_bin="$2"; rounds="${3:-3}"; size="${4:-1G}"; count="${5:-2000}"
work="$(mktemp -d /dev/shm/pxfer-ab.XXXXXX)"
pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true; rm -rf "$work"' EXIT
head -c "$size" /dev/urandom > "$work/big.bin"
mkdir -p "$work/tree"
for i in $(seq "$count"); do head -c 65536 /dev/urandom > "$work/tree/f$i"; done
# One pxferd per build on loopback: url[a|b], pids.
# shellcheck source=bench/perf/ab_servers.sh
source "$(dirname "${BASH_SOURCE[0]}")/perf/ab_servers.sh"
rate_of() { sed -n 's/.* bytes in \([0-9.]*\) s, \([0-9.]*\) MB\/s.*/\2/p' | tail -1; }
batch_rate() { sed -n 's/.* bytes in \([0-9.]*\) s, \([0-9.]*\) MB\/s$/\2/p' | tail -1; }
declare -A results
for r in $(seq "$rounds"); do
  # The order turns each round: whoever runs second in a round meets memory the first one has
  # just taken, and on this VM the first rounds' second runs collapsed whichever build it was
  # (bench/results/issue11-ab-2026-11-25-s5.md in git at b4bfa78).
  order="a b"; [ $((r % 2)) -eq 0 ] && order="b a"
  for side in $order; do
    bin_var="${side}_bin"; bin="${!bin_var}"; u="${url[$side]}"; c="$work/$side/client"
    rm -rf "$work/$side/root/"* "$c/"*
    put=$("$bin/pxfer" put -p 4 "$work/big.bin" "$u/big.bin" | rate_of)
    get=$("$bin/pxfer" get -p 4 "$u/big.bin" "$c/big.bin" | rate_of)
    cmp -s "$work/big.bin" "$c/big.bin" || { echo "$side round $r: fetched file differs" >&2; exit 1; }
    sput=$("$bin/pxfer" put -r -c 8 "$work/tree" "$u/" | batch_rate)
    sget=$("$bin/pxfer" get -r -c 8 "$u/tree" "$c/" | batch_rate)
    diff -rq "$work/tree" "$c/tree" >/dev/null || { echo "$side round $r: fetched tree differs" >&2; exit 1; }
    echo "round $r $side: put $put get $get small-put $sput small-get $sget MB/s"
    results[$side,put]+="$put "; results[$side,get]+="$get "
    results[$side,sput]+="$sput "; results[$side,sget]+="$sget "
  done
done
median() { tr ' ' '\n' | grep -v '^$' | sort -n | awk '{v[NR]=$1} END {print (NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }
printf '%-10s %10s %10s %8s\n' work "A MB/s" "B MB/s" "B/A"
for k in put get sput sget; do
  ma=$(echo "${results[a,$k]}" | median); mb=$(echo "${results[b,$k]}" | median)
  printf '%-10s %10s %10s %8.2f\n' "$k" "$ma" "$mb" "$(echo "$mb / $ma" | bc -l)"
done
