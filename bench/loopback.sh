#!/usr/bin/env bash
# Scripted loopback comparison for bench/results/loopback.md: a 2 GiB file in /dev/shm moved by
# `pxfer put` and `pxfer get` with 4 streams, against raw loopback TCP (iperf3, one stream)
# measured in the same run, alternating so machine noise hits both alike.
#   bench/loopback.sh [ROUNDS] [SIZE] [STREAMS]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
rounds="${1:-5}"; size="${2:-2G}"; streams="${3:-4}"
build_dir="${PXFER_BUILD_DIR:-$here/build}"
"$here/tools/build.sh" "$build_dir" Release pxfer-cli pxferd pxfer-bench >/dev/null
bin="$build_dir/bin"
work="$(mktemp -d /dev/shm/pxfer-loopback.XXXXXX)"
trap 'kill $spid $ipid 2>/dev/null || true; rm -rf "$work"' EXIT
mkdir -p "$work/root" "$work/client"
head -c "$size" /dev/urandom > "$work/client/src.bin"
bytes=$(stat -c %s "$work/client/src.bin")
export PXFER_KNOWN_HOSTS="$work/known_hosts"  # this run's throwaway server certificate, pinned on first use
# shellcheck source=bench/lab/lib.sh
source "$here/bench/lab/lib.sh"
lab_loopback_server "$bin" "$work"; spid=$LAB_LOOPBACK_PID
iperf3 -s -p 5299 >/dev/null 2>&1 & ipid=$!
url="$LAB_LOOPBACK_URL/src.bin"
sleep 0.3

rate_of() { sed -n 's/.* bytes in \([0-9.]*\) s, \([0-9.]*\) MB\/s.*/\2/p'; }
# Two references: iperf3 (one stream, its defaults) and pxfer-bench's plain blocking copy
# (1 MiB send/recv, one thread each side, no files), which is the faster of the two here.
printf '%-6s %10s %10s %10s %10s %8s %8s %8s %8s\n' round "iperf3" "rawcopy" "put" "get" put/ip3 get/ip3 put/raw get/raw
for r in $(seq "$rounds"); do
  # iperf3 reports bits/s; MB here = 10^6 bytes, as in pxfer's summary.
  raw=$(iperf3 -c 127.0.0.1 -p 5299 -t 3 -J | python3 -c 'import json,sys; print("%.1f" % (json.load(sys.stdin)["end"]["sum_received"]["bits_per_second"]/8e6))')
  rawcopy=$("$bin/pxfer-bench" --benchmark_filter=RawLoopback --benchmark_min_time=1 --benchmark_format=json 2>/dev/null |
    python3 -c 'import json,sys; print("%.1f" % (json.load(sys.stdin)["benchmarks"][0]["bytes_per_second"]/1e6))')
  rm -f "$work/root/src.bin" "$work/client/back.bin"
  put=$("$bin/pxfer" put -p "$streams" "$work/client/src.bin" "$url" | rate_of)
  rm -f "$work/client/back.bin"
  get=$("$bin/pxfer" get -p "$streams" "$url" "$work/client/back.bin" | rate_of)
  cmp -s "$work/client/src.bin" "$work/client/back.bin" || { echo "round $r: fetched file differs" >&2; exit 1; }
  printf '%-6s %10s %10s %10s %10s %8.2f %8.2f %8.2f %8.2f\n' "$r" "$raw" "$rawcopy" "$put" "$get" \
    "$(echo "$put / $raw" | bc -l)" "$(echo "$get / $raw" | bc -l)" \
    "$(echo "$put / $rawcopy" | bc -l)" "$(echo "$get / $rawcopy" | bc -l)"
done
echo "file: $bytes bytes in /dev/shm, $streams streams, default block size, adler32; $(nproc) cores; $(uname -r); load $(cut -d" " -f1-3 /proc/loadavg)"
