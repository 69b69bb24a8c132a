#!/usr/bin/env bash
# bench/perf/medium_files.sh BIN_DIR [ROUNDS] [COUNT] [SIZE]: COUNT files of SIZE put -r and get -r
# (-c 8) against one file of the same total size, put and get (-p 4), one pxfer against its own
# pxferd without authentication, in /dev/shm, memory warmed before every run; prints the wall time
# of each (docs/performance.md section 15: what one set of streams for a whole -r could buy).
set -euo pipefail
bin="$1"; rounds="${2:-3}"; count="${3:-500}"; size="${4:-4M}"
work="$(mktemp -d /dev/shm/pxfer-med.XXXXXX)"; pid=""
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$work"' EXIT
mkdir -p "$work/tree" "$work/root" "$work/client"
for i in $(seq "$count"); do head -c "$size" /dev/urandom > "$work/tree/m$i"; done
cat "$work"/tree/m* > "$work/one.bin"
bytes=$(stat -c %s "$work/one.bin")
export PXFER_KNOWN_HOSTS="$work/known_hosts"
"$bin/pxferd" --root "$work/root" --listen 127.0.0.1:0 --insecure-no-auth --state-dir "$work/state" \
  --port-file "$work/port" 2>/dev/null & pid=$!
for _ in $(seq 100); do [ -s "$work/port" ] && break; sleep 0.05; done
u="pxfer://127.0.0.1:$(cat "$work/port")"
warm() {
  python3 "$(dirname "${BASH_SOURCE[0]}")/warm_memory.py" "$((bytes + (256 << 20)))"
}
timed() { warm; /usr/bin/time -f %e "$@" 2>&1 >/dev/null | grep -v warning | tail -1; }
for r in $(seq "$rounds"); do
  rm -rf "$work/root/"* "$work/client/"*
  tp=$(timed "$bin/pxfer" put -q -r -c 8 "$work/tree" "$u/tree")
  tg=$(timed "$bin/pxfer" get -q -r -c 8 "$u/tree" "$work/client/")
  t1=$(timed "$bin/pxfer" put -q -p 4 "$work/one.bin" "$u/one.bin")
  t2=$(timed "$bin/pxfer" get -q -p 4 "$u/one.bin" "$work/client/one.bin")
  echo "round $r: $count x $size put -r $tp s, get -r $tg s | one file of $bytes bytes: put $t1 s, get $t2 s"
done
