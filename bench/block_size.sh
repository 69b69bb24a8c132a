#!/usr/bin/env bash
# Block size sweep behind pxfer's default (bench/results/block-size.md): put and get of one file
# in /dev/shm over loopback with 4 streams, for each block size, ROUNDS times, median MB/s.
#   bench/block_size.sh [ROUNDS] [SIZE] [BLOCK_SIZES]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
rounds="${1:-3}"; size="${2:-1G}"; blocks="${3:-1M 2M 4M 8M 16M}"
build_dir="${PXFER_BUILD_DIR:-$here/build}"
"$here/tools/build.sh" "$build_dir" Release pxfer-cli pxferd >/dev/null
bin="$build_dir/bin"
work="$(mktemp -d /dev/shm/pxfer-blocks.XXXXXX)"
trap 'kill $spid 2>/dev/null || true; rm -rf "$work"' EXIT
mkdir -p "$work/root"
head -c "$size" /dev/urandom > "$work/src.bin"
export PXFER_KNOWN_HOSTS="$work/known_hosts"  # this run's throwaway server certificate, pinned on first use
# shellcheck source=bench/lab/lib.sh
source "$here/bench/lab/lib.sh"
lab_loopback_server "$bin" "$work"; spid=$LAB_LOOPBACK_PID
url="$LAB_LOOPBACK_URL/src.bin"
rate_of() { sed -n 's/.* bytes in [0-9.]* s, \([0-9.]*\) MB\/s.*/\1/p'; }
median() { sort -n | awk '{v[NR]=$1} END {print (NR%2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2)}'; }
printf '%-8s %14s %14s\n' block "put MB/s" "get MB/s"
for b in $blocks; do
  puts=(); gets=()
  for _ in $(seq "$rounds"); do
    puts+=("$("$bin/pxfer" put -p 4 --block-size "$b" --overwrite "$work/src.bin" "$url" | rate_of)")
    gets+=("$("$bin/pxfer" get -p 4 --block-size "$b" --overwrite "$url" "$work/back.bin" | rate_of)")
  done
  printf '%-8s %14s %14s\n' "$b" "$(printf '%s\n' "${puts[@]}" | median)" "$(printf '%s\n' "${gets[@]}" | median)"
done
echo "file: $size in /dev/shm, 4 streams, adler32, median of $rounds; $(nproc) cores; $(uname -r); load $(cut -d' ' -f1-3 /proc/loadavg)"
