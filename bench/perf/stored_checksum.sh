#!/usr/bin/env bash
# bench/perf/stored_checksum.sh BIN_DIR [ROUNDS] [SIZE]: what a stored checksum saves (docs/protocol.md
# "Stored checksums", docs/performance.md section 16). One build, two pxferds: A with
# --no-stored-checksums, B as shipped. Each gets the same file by a put; then, rounds interleaved
# with the order turned each round: `pxfer sum` (wall) and a 4-stream get (wall, client user+sys,
# pxferd CPU ticks of 10 ms). PXAB_WARM=1 touches and frees SIZE + 256 MiB before every get, as
# bench/compare.sh does.
set -euo pipefail
bin="$1"; rounds="${2:-6}"; size="${3:-1G}"
work="$(mktemp -d /dev/shm/pxfer-stc.XXXXXX)"; pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true; rm -rf "$work"' EXIT
head -c "$size" /dev/urandom > "$work/big.bin"
export PXFER_KNOWN_HOSTS="$work/known_hosts"
declare -A url spid
for side in a b; do
  extra=(); [ "$side" = a ] && extra=(--no-stored-checksums)
  mkdir -p "$work/$side/root" "$work/$side/client"
  "$bin/pxferd" --root "$work/$side/root" --listen 127.0.0.1:0 --insecure-no-auth --state-dir "$work/$side/state" \
    --port-file "$work/$side/port" "${extra[@]}" 2>/dev/null & pids+=($!); spid[$side]=$!
  for _ in $(seq 100); do [ -s "$work/$side/port" ] && break; sleep 0.05; done
  url[$side]="pxfer://127.0.0.1:$(cat "$work/$side/port")"
  "$bin/pxfer" put -q -p 4 "$work/big.bin" "${url[$side]}/big.bin" 2>/dev/null
done
ticks() { awk '{print $14+$15}' "/proc/$1/stat"; }
warm() {
  [ "${PXAB_WARM:-0}" = 1 ] || return 0
  python3 "$(dirname "${BASH_SOURCE[0]}")/warm_memory.py" "$(( $(stat -c %s "$work/big.bin") + (256 << 20) ))"
}
echo "side: a = --no-stored-checksums, b = stored checksums (default)"
for r in $(seq "$rounds"); do
  order="a b"; [ $((r % 2)) -eq 0 ] && order="b a"
  for side in $order; do
    u="${url[$side]}"; c="$work/$side/client"; rm -f "$c/"*
    s=$( { /usr/bin/time -f "%e" "$bin/pxfer" sum "$u/big.bin" >/dev/null; } 2>&1 | tail -1)
    warm
    t0=$(ticks ${spid[$side]})
    g=$( { /usr/bin/time -f "%e %U %S" "$bin/pxfer" get -q -p 4 "$u/big.bin" "$c/big.bin"; } 2>&1 | tail -1)
    t1=$(ticks ${spid[$side]})
    cmp -s "$work/big.bin" "$c/big.bin" || { echo "$side: fetched file differs" >&2; exit 1; }
    echo "$r $side sum wall $s | get wall/user/sys $g server $((t1-t0))"
  done
done
