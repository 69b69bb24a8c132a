#!/usr/bin/env bash
# bench/perf/small_rss.sh BIN [COUNT]: pxferd peak RSS (VmHWM) through a put -r and then a get -r of
# COUNT x 64 KiB files with -c 8 on loopback (docs/performance.md section 9, the batch bound).
set -euo pipefail
bin="$1"; n="${2:-10000}"
work="$(mktemp -d /dev/shm/rss.XXXXXX)"; trap 'kill $spid 2>/dev/null || true; rm -rf "$work"' EXIT
mkdir -p "$work/root" "$work/c/tree" "$work/back"
python3 -c "
import os
for i in range($n): open('$work/c/tree/f%d'%i,'wb').write(os.urandom(65536))"
export PXFER_KNOWN_HOSTS="$work/kh"
"$bin/pxferd" --root "$work/root" --listen 127.0.0.1:0 --insecure-no-auth --state-dir "$work/state" --port-file "$work/port" 2>/dev/null & spid=$!
for _ in $(seq 100); do [ -s "$work/port" ] && break; sleep 0.05; done
u="pxfer://127.0.0.1:$(cat "$work/port")"
grep VmHWM /proc/$spid/status
"$bin/pxfer" put -q -r -c 8 "$work/c/tree" "$u/t" 2>/dev/null; echo "after put: $(grep VmHWM /proc/$spid/status) $(grep VmRSS /proc/$spid/status)"
echo 5 > /proc/$spid/clear_refs
"$bin/pxfer" get -q -r -c 8 "$u/t" "$work/back/" 2>/dev/null; echo "after get: $(grep VmHWM /proc/$spid/status) $(grep VmRSS /proc/$spid/status)"
