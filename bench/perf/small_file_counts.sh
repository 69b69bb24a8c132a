#!/usr/bin/env bash
# bench/perf/small_file_counts.sh BIN_DIR TREE [strace|perf]: a get -r -c 8 of TREE (e.g. 2000 x
# 64 KiB) from BIN_DIR's pxferd on loopback, pxferd and the client under `strace -c -f` (system
# calls per kind; counts, not times), or under `perf record -e cpu-clock` for 3 x (put -r + get -r)
# (CPU samples at each end: `perf script -i /tmp/pxfer-sf-{server,client}.data -F comm | wc -l`).
# docs/performance.md section 5, rows s5-s7, were measured with it against /tmp/auth-old-bin (bd09507).
set -euo pipefail
bin=$1; tree=$2; mode=${3:-strace}
w=$(mktemp -d /dev/shm/pxfer-sf.XXXXXX); mkdir -p "$w/root" "$w/client"
export PXFER_KNOWN_HOSTS=$w/kh
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$w"' EXIT
if [ "$mode" = perf ]; then
  perf record -e cpu-clock -F 2000 -o /tmp/pxfer-sf-server.data "$bin/pxferd" --root "$w/root" --listen 127.0.0.1:0 \
    --insecure-no-auth --state-dir "$w/state" --port-file "$w/port" 2>/dev/null &
else
  "$bin/pxferd" --root "$w/root" --listen 127.0.0.1:0 --insecure-no-auth --state-dir "$w/state" --port-file "$w/port" 2>/dev/null &
fi
sp=$!
for _ in $(seq 100); do [ -s "$w/port" ] && break; sleep 0.05; done
u=pxfer://127.0.0.1:$(cat "$w/port")
"$bin/pxfer" put -r -c 8 "$tree" "$u/" >/dev/null
name=$(basename "$tree")
if [ "$mode" = perf ]; then
  perf record -e cpu-clock -F 2000 -o /tmp/pxfer-sf-client.data -- bash -c "for i in 1 2 3; do rm -rf $w/root/$name $w/client/*; \
    $bin/pxfer put -r -c 8 $tree $u/ | tail -1; $bin/pxfer get -r -c 8 $u/$name $w/client/ | tail -1; done"
  pkill -INT -f "perf record -e cpu-clock -F 2000 -o /tmp/pxfer-sf-server.data"; sleep 2
  for end in server client; do echo "$end: $(perf script -i /tmp/pxfer-sf-$end.data -F comm 2>/dev/null | wc -l) samples"; done
else
  strace -c -f -p "$sp" -o /tmp/pxfer-sf-server.txt & st=$!; sleep 0.5
  strace -c -f -o /tmp/pxfer-sf-client.txt "$bin/pxfer" get -r -c 8 "$u/$name" "$w/client/" | tail -1
  kill -INT "$st"; sleep 1
  echo "pxferd: /tmp/pxfer-sf-server.txt, client: /tmp/pxfer-sf-client.txt"; head -12 /tmp/pxfer-sf-server.txt
fi
