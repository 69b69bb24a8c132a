#!/usr/bin/env bash
# bench/perf/round_order.sh [ROUNDS] [get-put|put-get]: one pxferd, a 2 GiB get and a 2 GiB put
# (4 streams) per round in the order given, both destinations removed at the start of each round;
# prints wall, client user and system seconds and pxferd's CPU ticks (10 ms) per transfer. Shows
# that the second 2 GiB writer of a round meets memory this VM handed back to its host
# (docs/performance.md section 12). BIN=DIR picks the binaries (default build/bin).
set -euo pipefail
bin="${BIN:-build/bin}"; rounds="${1:-4}"; order="${2:-get-put}"
w=$(mktemp -d /dev/shm/pxfer-order.XXXXXX); trap 'kill $sp 2>/dev/null; rm -rf "$w"' EXIT
export PXFER_KNOWN_HOSTS=$w/kh
mkdir -p "$w/root" "$w/cli"
head -c 2G /dev/urandom > "$w/src.bin"; cp "$w/src.bin" "$w/root/src.bin"
"$bin/pxferd" --root "$w/root" --listen 127.0.0.1:0 --insecure-no-auth --state-dir "$w/st" --port-file "$w/port" 2>/dev/null & sp=$!
for _ in $(seq 100); do [ -s "$w/port" ] && break; sleep 0.05; done
u=pxfer://127.0.0.1:$(cat "$w/port")
ticks() { awk '{print $14 + $15}' "/proc/$sp/stat"; }
one() {
  local t0 r; t0=$(ticks)
  if [ "$1" = get ]; then
    r=$( { /usr/bin/time -f "%e s %U u %S s" "$bin/pxfer" get -q -p 4 "$u/src.bin" "$w/cli/g.bin"; } 2>&1 | grep -v warning | tr '\n' ' ')
  else
    r=$( { /usr/bin/time -f "%e s %U u %S s" "$bin/pxfer" put -q -p 4 "$w/src.bin" "$u/put.bin"; } 2>&1 | grep -v warning | tr '\n' ' ')
  fi
  echo -n "$1 $r pxferd $(( $(ticks) - t0 )) | "
}
for r in $(seq "$rounds"); do
  rm -f "$w/root/put.bin" "$w/cli/"*
  echo -n "round $r: "
  for d in ${order//-/ }; do one "$d"; done
  echo
done
