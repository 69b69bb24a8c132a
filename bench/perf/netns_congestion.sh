#!/usr/bin/env bash
# bench/perf/netns_congestion.sh [BIN_DIR] [FILE] [ROUNDS]: a 4-stream put of FILE into a fresh
# destination, BBR against CUBIC (pxfer --congestion), rounds interleaved, inside a private network
# namespace (unshare -n, loopback only) as bench/compare.sh runs it. Prints MB/s and pxferd's CPU
# per put. Needs root (unshare -n). docs/performance.md section 7 has what it found.
set -euo pipefail
if [ "${PXFER_IN_NETNS:-}" != 1 ]; then
  exec unshare -n env PXFER_IN_NETNS=1 bash "$0" "$@"
fi
bin="${1:-build/bin}"; file="${2:-/dev/shm/pxfer-netns-cc.bin}"; rounds="${3:-3}"
[ -f "$file" ] || head -c 2G /dev/urandom > "$file"
ip link set lo up
w=$(mktemp -d /dev/shm/pxfer-netns-cc.XXXXXX)
trap 'kill "$sp" 2>/dev/null; rm -rf "$w"' EXIT
mkdir -p "$w/root"; export PXFER_KNOWN_HOSTS=$w/kh
"$bin/pxferd" --root "$w/root" --listen 127.0.0.1:0 --insecure-no-auth --state-dir "$w/state" --port-file "$w/port" 2>/dev/null & sp=$!
for _ in $(seq 100); do [ -s "$w/port" ] && break; sleep 0.05; done
u=pxfer://127.0.0.1:$(cat "$w/port")
cpu() { awk '{print $14 + $15}' "/proc/$sp/stat"; }  # clock ticks (10 ms)
echo "kernel $(uname -r), default $(sysctl -n net.ipv4.tcp_congestion_control), lo qdisc: $(tc qdisc show dev lo | head -1)"
for r in $(seq "$rounds"); do
  for cc in bbr cubic; do
    rm -f "$w/root/"*
    c0=$(cpu)
    rate=$("$bin/pxfer" put -p 4 --congestion "$cc" "$file" "$u/put.bin" 2>/dev/null | grep -o '[0-9.]* MB/s' | tail -1)
    c1=$(cpu)
    echo "round $r $cc: $rate, pxferd CPU $(( (c1 - c0) * 10 )) ms"
  done
done
