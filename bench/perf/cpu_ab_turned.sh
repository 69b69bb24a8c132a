#!/usr/bin/env bash
# bench/perf/cpu_ab_turned.sh A_BIN B_BIN ROUNDS SIZE [PXFER OPTIONS...]: a 4-stream put then get of SIZE
# per build, each pxfer against its own pxferd, rounds interleaved with the order turned each
# round; prints wall, client user and system seconds and pxferd CPU ticks per run
# (docs/performance.md section 10). PXAB_WARM=1 touches and frees SIZE + 256 MiB of memory in a
# process of its own before every run, as bench/compare.sh does (this VM hands freed memory back
# to its host: section 12). PXAB_PIN=1 runs both pxferds on CPU 0 and every pxfer on CPU 1, as two
# hosts of one core each would (the ends no longer share cores). PXAB_A_OPTS / PXAB_B_OPTS add
# options to one side's pxfer only (A_BIN = B_BIN and PXAB_B_OPTS="--block-size 1M" compares an option).
set -euo pipefail
a_bin="$1"; b_bin="$2"; rounds="$3"; size="$4"; shift 4; extra=("$@")
work="$(mktemp -d /dev/shm/pxfer-cab.XXXXXX)"; pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true; rm -rf "$work"' EXIT
head -c "$size" /dev/urandom > "$work/big.bin"
warm() {
  [ "${PXAB_WARM:-0}" = 1 ] || return 0
  python3 "$(dirname "${BASH_SOURCE[0]}")/warm_memory.py" "$(( $(stat -c %s "$work/big.bin") + (256 << 20) ))"
}
# shellcheck source=bench/perf/ab_servers.sh
source "$(dirname "${BASH_SOURCE[0]}")/ab_servers.sh"
pin=()
if [ "${PXAB_PIN:-0}" = 1 ]; then
  for side in a b; do taskset -a -cp 0 "${spid[$side]}" >/dev/null; done
  pin=(taskset -c 1)
fi
for r in $(seq "$rounds"); do
  order="a b"; [ $((r % 2)) -eq 0 ] && order="b a"
  for side in $order; do
    bin_var="${side}_bin"; bin="${!bin_var}"; u="${url[$side]}"; c="$work/$side/client"
    rm -rf "$work/$side/root/"* "$c/"*
    opts_var="PXAB_${side^^}_OPTS"; read -r -a side_opts <<< "${!opts_var:-}"
    warm
    t0=$(ticks ${spid[$side]})
    p=$( { /usr/bin/time -f "%e %U %S" "${pin[@]}" "$bin/pxfer" put -q -p 4 "${extra[@]}" "${side_opts[@]}" "$work/big.bin" "$u/big.bin" ; } 2>&1 | grep -v warning | tail -1)
    warm
    t1=$(ticks ${spid[$side]})
    g=$( { /usr/bin/time -f "%e %U %S" "${pin[@]}" "$bin/pxfer" get -q -p 4 "${extra[@]}" "${side_opts[@]}" "$u/big.bin" "$c/big.bin" ; } 2>&1 | tail -1)
    t2=$(ticks ${spid[$side]})
    echo "$r $side put $p srv $((t1-t0)) | get $g srv $((t2-t1))"
  done
done
