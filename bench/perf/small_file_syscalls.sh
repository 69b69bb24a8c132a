#!/usr/bin/env bash
# System calls per small file at both ends (strace -f -c: counts do not depend on the machine's
# load, unlike times). One pxferd under strace, one `pxfer put -r -c C` then `pxfer get -r -c C`
# of N x 64 KiB files, each under strace; prints calls per file for the busiest system calls.
#   bench/perf/small_file_syscalls.sh BIN_DIR [N] [C]
set -euo pipefail
bin="$1"; n="${2:-200}"; c="${3:-8}"
work="$(mktemp -d /dev/shm/pxfer-sc.XXXXXX)"
pid=""
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$work"' EXIT
mkdir -p "$work/tree" "$work/root" "$work/get"
for i in $(seq "$n"); do head -c 65536 /dev/urandom > "$work/tree/f$i"; done
export PXFER_KNOWN_HOSTS="$work/known_hosts"
strace -f -c -o "$work/server.txt" "$bin/pxferd" --root "$work/root" --listen 127.0.0.1:0 --insecure-no-auth \
  --state-dir "$work/state" --port-file "$work/port" 2>/dev/null & pid=$!
for _ in $(seq 200); do [ -s "$work/port" ] && break; sleep 0.05; done
u="pxfer://127.0.0.1:$(cat "$work/port")"
strace -f -c -o "$work/put.txt" "$bin/pxfer" put -r -c "$c" -q "$work/tree" "$u/" >/dev/null
strace -f -c -o "$work/get.txt" "$bin/pxfer" get -r -c "$c" -q "$u/tree" "$work/get/" >/dev/null
diff -rq "$work/tree" "$work/get/tree" >/dev/null || { echo "fetched tree differs" >&2; exit 1; }
# strace passes no SIGINT on to the server it started: signal pxferd itself, then wait for strace.
kill -INT "$(pgrep -P "$pid")"; wait "$pid" 2>/dev/null || true; pid=""
per_file() {  # strace -c table -> "name calls/file", busiest first
  awk -v n="$n" '$1 ~ /^[0-9.]+$/ && NF >= 5 && $NF != "total" { name=$NF; calls=$4; printf "%-18s %7.1f\n", name, calls / n }' "$1" |
    sort -k2 -n -r | head -"${2:-14}"
  awk -v n="$n" '$NF == "total" { printf "%-18s %7.1f\n", "all", $4 / n }' "$1"
}
echo "== pxferd, per file (put -r then get -r: $n files each, so per file of both runs together)"; per_file "$work/server.txt" 18
echo "== pxfer put -r -c $c, per file"; per_file "$work/put.txt"
echo "== pxfer get -r -c $c, per file"; per_file "$work/get.txt"
