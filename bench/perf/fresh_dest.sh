#!/usr/bin/env bash
# bench/perf/fresh_dest.sh BIN_DIR SIZE ROUNDS: printed rate and wall time of a 4-stream put and get into a
# fresh destination against --overwrite of the existing one (issue 12.4; docs/performance.md, section 6)
set -euo pipefail
bin="$1"; size="${2:-1G}"; rounds="${3:-3}"
w=$(mktemp -d /dev/shm/lg-fr.XXXXXX); spid=
trap '[ -n "$spid" ] && kill $spid 2>/dev/null; rm -rf "$w"' EXIT
mkdir -p "$w/root" "$w/client"; head -c "$size" /dev/urandom > "$w/big.bin"; cp "$w/big.bin" "$w/root/src.bin"
export PXFER_KNOWN_HOSTS="$w/kh"
"$bin/pxferd" --root "$w/root" --listen 127.0.0.1:0 --insecure-no-auth --state-dir "$w/st" --port-file "$w/port" 2>/dev/null & spid=$!
for _ in $(seq 100); do [ -s "$w/port" ] && break; sleep 0.05; done
u="pxfer://127.0.0.1:$(cat $w/port)"
run() { local t0=$(date +%s.%N); local r=$("$@" | sed -n 's/.* bytes in \([0-9.]*\) s, \([0-9.]*\) MB\/s.*/\2/p' | tail -1); local t1=$(date +%s.%N); printf "%s MB/s wall %.2f s" "$r" "$(echo "$t1 - $t0" | bc -l)"; }
for r in $(seq $rounds); do
  rm -f "$w/root/dst.bin" "$w/client/out.bin"
  echo "round $r put fresh: $(run "$bin/pxfer" put -p 4 "$w/big.bin" "$u/dst.bin") | put overwrite: $(run "$bin/pxfer" put -p 4 --overwrite "$w/big.bin" "$u/dst.bin")"
  echo "round $r get fresh: $(run "$bin/pxfer" get -p 4 "$u/src.bin" "$w/client/out.bin") | get overwrite: $(run "$bin/pxfer" get -p 4 --overwrite "$u/src.bin" "$w/client/out.bin")"
done
echo "load $(cut -d' ' -f1-3 /proc/loadavg)"
