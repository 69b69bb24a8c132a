#!/usr/bin/env bash
# bench/perf/kept_streams_race.sh A_BIN B_BIN [RUNS]: how often a -r run loses a kept data
# connection to the race at a file's end (a stream still attaching when the other stream had moved
# every block). Per build, RUNS `get -r -c 1 -v` of 8 files of two blocks (3 MiB + i*1000 bytes)
# from its own pxferd, the builds interleaved, with a busy loop on the machine (a loaded CI host);
# counts the data connections each run opened ("attached" without "on a kept connection": 2 is the
# least, one per stream of the first file). Prints "count build connections" (docs/performance.md
# section 20).
set -euo pipefail
A=$(cd "$1" && pwd); B=$(cd "$2" && pwd); runs=${3:-16}
work="$(mktemp -d /dev/shm/pxfer-race.XXXXXX)"; pids=""
trap 'kill $pids 2>/dev/null; rm -rf "$work"' EXIT
mkdir -p "$work/tree"
for i in $(seq 0 7); do head -c $((3 * 1048576 + i * 1000)) /dev/urandom > "$work/tree/m$i"; done
export PXFER_KNOWN_HOSTS="$work/known_hosts"
declare -A url
for x in A B; do
  mkdir -p "$work/$x/root"
  "${!x}/pxferd" --root "$work/$x/root" --listen 127.0.0.1:0 --insecure-no-auth --state-dir "$work/$x/state" \
    --port-file "$work/$x/port" 2>/dev/null & pids="$pids $!"
  for _ in $(seq 100); do [ -s "$work/$x/port" ] && break; sleep 0.05; done
  url[$x]="pxfer://127.0.0.1:$(cat "$work/$x/port")"
  "${!x}/pxfer" put -q -r -c 1 "$work/tree" "${url[$x]}/t" 2>/dev/null
done
sh -c 'while :; do :; done' & pids="$pids $!"
for _ in $(seq "$runs"); do
  for x in A B; do
    rm -rf "$work/back"
    n=$("${!x}/pxfer" get -v -r -c 1 "${url[$x]}/t" "$work/back" 2>&1 | grep -E 'stream [0-9]+ attached' | grep -vc 'on a kept' || true)
    echo "$x $n"
  done
done | sort | uniq -c
