#!/usr/bin/env bash
# Many small files against one large file of the same total size (issue 4, point 2):
# `pxfer put -r` / `get -r` of COUNT files of SIZE bytes with -c 1, 4 and 8 files in flight (or
# the list in PXSF_CONCURRENCY), and `pxfer put` / `get` of one COUNT x SIZE file, in the same run.
#   bench/small_files.sh [COUNT] [SIZE] [ROUNDS] [STREAMS]     (defaults 10000 64K 3 4)
# Prints a markdown table: files/s, MB/s, and the ratio to the large file's rate (same direction,
# same round). Files live in /dev/shm, so this measures the protocol and the CPU, not a disk.
# On loopback by default; with PXSF_WAN set (root), over an emulated link instead: PXSF_WAN holds
# `pxfer-wanem up` arguments, e.g. PXSF_WAN="--delay 5 --rate 100mbit" (docs/wanem.md), with the
# client in namespace pxsf-a and pxferd in pxsf-b (bench/lab/lib.sh).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
count="${1:-10000}"; size="${2:-64K}"; rounds="${3:-3}"; streams="${4:-4}"
read -r -a concurrency <<< "${PXSF_CONCURRENCY:-1 4 8}"
build_dir="${PXFER_BUILD_DIR:-$here/build}"
"$here/tools/build.sh" "$build_dir" Release pxfer-cli pxferd pxfer-wanem >/dev/null
bin="$build_dir/bin"
work="$(mktemp -d /dev/shm/pxfer-small.XXXXXX)"
spid=""
run=()  # prefix of every client command: nothing on loopback, `ip netns exec pxsf-a` over the link
if [ -n "${PXSF_WAN:-}" ]; then
  # shellcheck source=bench/lab/lib.sh
  source "$here/bench/lab/lib.sh"
  LAB_WANEM="$(lab_find_wanem "$build_dir")"; LAB_PXFER="$bin/pxfer"; LAB_PXFERD="$bin/pxferd"
  LAB_NAME=pxsf; LAB_WORK="$work"
  trap 'lab_cleanup; rm -rf "$work"' EXIT
  lab_can_run || { echo "bench/small_files.sh: PXSF_WAN needs root and /dev/net/tun" >&2; exit 1; }
  lab_lock /tmp/pxfer-lab.lock 600
  # shellcheck disable=SC2086
  lab_link_up $PXSF_WAN
  lab_server_start
  root="$LAB_WORK/srv"
  base="pxfer://$LAB_B:$LAB_PORT"
  run=(ip netns exec "$LAB_NAME-a")
else
  trap 'kill $spid 2>/dev/null || true; rm -rf "$work"' EXIT
  root="$work/root"
  export PXFER_KNOWN_HOSTS="$work/known_hosts"
  # shellcheck source=bench/lab/lib.sh
  source "$here/bench/lab/lib.sh"
  lab_loopback_server "$bin" "$work"; spid=$LAB_LOOPBACK_PID
  base=$LAB_LOOPBACK_URL
fi
mkdir -p "$work/client/tree"
python3 - "$work/client/tree" "$count" "$size" <<'EOF'
import os, sys
top, count, size = sys.argv[1], int(sys.argv[2]), sys.argv[3]
units = {"K": 1024, "M": 1024**2}
nbytes = int(size[:-1]) * units[size[-1]] if size[-1] in units else int(size)
for i in range(count):
    d = os.path.join(top, "%03d" % (i // 500))   # 500 files a directory
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "f%06d" % i), "wb") as f:
        f.write(os.urandom(nbytes))
EOF
bytes=$(find "$work/client/tree" -type f -printf '%s\n' | awk '{s += $1} END {print s}')
head -c "$bytes" /dev/urandom > "$work/client/large.bin"

# Seconds of a command (wall clock), its output discarded; fails the script if the command fails.
seconds_of() {
  local t0 t1
  t0=$(date +%s.%N)
  "$@" >/dev/null || { echo "failed: $*" >&2; return 1; }
  t1=$(date +%s.%N)
  echo "$t1 - $t0" | bc -l
}

echo "| round | direction | what | seconds | files/s | MB/s | / large file |"
echo "| --- | --- | --- | --- | --- | --- | --- |"
for r in $(seq "$rounds"); do
  for direction in put get; do
    if [ "$direction" = put ]; then
      rm -f "$root/large.bin"
      large=$(seconds_of "${run[@]}" "$bin/pxfer" put -q -p "$streams" "$work/client/large.bin" "$base/large.bin")
    else
      rm -f "$work/client/back.bin"
      large=$(seconds_of "${run[@]}" "$bin/pxfer" get -q -p "$streams" "$base/large.bin" "$work/client/back.bin")
    fi
    large_rate=$(echo "$bytes / $large / 1000000" | bc -l)
    printf '| %s | %s | 1 file of %s bytes | %.2f | %.1f | %.1f | 1.00 |\n' "$r" "$direction" "$bytes" "$large" \
      "$(echo "1 / $large" | bc -l)" "$large_rate"
    for c in "${concurrency[@]}"; do
      if [ "$direction" = put ]; then
        rm -rf "$root/tree"
        s=$(seconds_of "${run[@]}" "$bin/pxfer" put -r -c "$c" -p "$streams" "$work/client/tree" "$base/")
      else
        rm -rf "$work/client/back"
        s=$(seconds_of "${run[@]}" "$bin/pxfer" get -r -c "$c" -p "$streams" "$base/tree" "$work/client/back")
        diff -rq "$work/client/tree" "$work/client/back" >/dev/null || { echo "round $r: get -r tree differs" >&2; exit 1; }
      fi
      rate=$(echo "$bytes / $s / 1000000" | bc -l)
      printf '| %s | %s | %s x %s, -c %s | %.2f | %.0f | %.1f | %.3f |\n' "$r" "$direction" "$count" "$size" "$c" "$s" \
        "$(echo "$count / $s" | bc -l)" "$rate" "$(echo "$rate / $large_rate" | bc -l)"
    done
  done
done
echo
echo "$count files of $size ($bytes bytes) vs one file of $bytes bytes, -p $streams, default block size, adler32,"
where="loopback"
[ -n "${PXSF_WAN:-}" ] && where="an emulated link (pxfer-wanem up $PXSF_WAN)"
echo "/dev/shm on both ends, $where; $(nproc) cores; $(uname -r); load $(cut -d" " -f1-3 /proc/loadavg)."
echo "Times are wall clock of the whole command (process start, plan, LIST/MKDIR, transfers, exit)."
