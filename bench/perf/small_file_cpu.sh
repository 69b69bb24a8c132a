#!/usr/bin/env bash
# CPU time per small file at each end, two builds side by side, rounds interleaved (CPU time
# moves far less with the machine's load than wall time; no hardware counters in this VM, and
# valgrind cannot run pxferd: it lacks openat2). Each build's pxfer against its own pxferd:
# `put -r -c C` then `get -r -c C` of N x 64 KiB files; client CPU from wait4 (GNU time), server
# CPU from /proc/PID/stat before and after. Prints µs of CPU per file, medians over the rounds.
#   bench/perf/small_file_cpu.sh A_BIN_DIR B_BIN_DIR [ROUNDS] [N] [C]
set -euo pipefail
a_bin="$1"; b_bin="$2"; rounds="${3:-3}"; n="${4:-500}"; c="${5:-8}"
work="$(mktemp -d /dev/shm/pxfer-cpu.XXXXXX)"
pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true; rm -rf "$work"' EXIT
mkdir -p "$work/tree"
for i in $(seq "$n"); do head -c 65536 /dev/urandom > "$work/tree/f$i"; done
# shellcheck source=bench/perf/ab_servers.sh
source "$(dirname "${BASH_SOURCE[0]}")/ab_servers.sh"
tck=$(getconf CLK_TCK)
server_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
declare -A res
for r in $(seq "$rounds"); do
  for side in a b; do
    bin_var="${side}_bin"; bin="${!bin_var}"; u="${url[$side]}"; cdir="$work/$side/client"
    rm -rf "$work/$side/root/"* "$cdir/"*
    for op in put get; do
      s0=$(server_ticks "${spid[$side]}")
      if [ "$op" = put ]; then
        /usr/bin/time -f '%U %S %e' -o "$work/t" "$bin/pxfer" put -r -c "$c" -q "$work/tree" "$u/" >/dev/null
      else
        /usr/bin/time -f '%U %S %e' -o "$work/t" "$bin/pxfer" get -r -c "$c" -q "$u/tree" "$cdir/" >/dev/null
      fi
      s1=$(server_ticks "${spid[$side]}")
      read -r cu cs el < "$work/t"
      cl=$(echo "($cu + $cs) * 1000000 / $n" | bc -l); sv=$(echo "($s1 - $s0) * 1000000 / $tck / $n" | bc -l)
      printf 'round %s %s %s: client %6.0f µs/file, server %6.0f µs/file, %5.2f s wall\n' "$r" "$side" "$op" "$cl" "$sv" "$el"
      res[$side,$op,c]+="$cl "; res[$side,$op,s]+="$sv "
    done
    diff -rq "$work/tree" "$cdir/tree" >/dev/null || { echo "$side round $r: fetched tree differs" >&2; exit 1; }
  done
done
median() { tr ' ' '\n' | grep -v '^$' | sort -n | awk '{v[NR]=$1} END {print (NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }
printf '%-12s %10s %10s %6s\n' "µs CPU/file" A B B/A
for op in put get; do for e in c s; do
  ma=$(echo "${res[a,$op,$e]}" | median); mb=$(echo "${res[b,$op,$e]}" | median)
  printf '%-12s %10.0f %10.0f %6.2f\n' "$op $([ $e = c ] && echo client || echo server)" "$ma" "$mb" "$(echo "$mb / $ma" | bc -l)"
done; done
