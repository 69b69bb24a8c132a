#!/usr/bin/env bash
# Third-party copy against a direct put (bench/results/tpc.md; not in CI): a file in /dev/shm
# copied from one pxferd to another by `pxfer cp pxfer://A/x pxfer://B/y` (pull and push), and the
# same file sent to B by `pxfer put` from the client, interleaved round by round so that machine
# noise hits all three alike. For each run it also reports the bytes the CLIENT process read and
# wrote (rchar + wchar of /proc/PID/io: files and sockets alike, sampled every 20 ms until it
# exits), which for a third-party copy must stay under 1 MiB: no payload passes through it.
#   bench/tpc.sh [ROUNDS] [SIZE] [STREAMS]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
rounds="${1:-5}"; size="${2:-2G}"; streams="${3:-4}"
build_dir="${PXFER_BUILD_DIR:-$here/build}"
bin="$build_dir/bin"
[ -x "$bin/pxfer" ] && [ -x "$bin/pxferd" ] || { echo "tpc.sh: build pxfer and pxferd in $build_dir first" >&2; exit 1; }
work="$(mktemp -d /dev/shm/pxfer-tpc.XXXXXX)"
apid=""; bpid=""
trap 'kill $apid $bpid 2>/dev/null || true; rm -rf "$work"' EXIT
mkdir -p "$work/a/root" "$work/b/root" "$work/client"
head -c "$size" /dev/urandom > "$work/a/root/src.bin"
ln "$work/a/root/src.bin" "$work/client/src.bin"  # the same bytes for put, without a second copy in memory
bytes=$(stat -c %s "$work/a/root/src.bin")
export PXFER_KNOWN_HOSTS="$work/known_hosts"
# shellcheck source=bench/lab/lib.sh
source "$here/bench/lab/lib.sh"
lab_loopback_server "$bin" "$work/a" --tpc-allow '127.0.0.1:*'; apid=$LAB_LOOPBACK_PID; A=$LAB_LOOPBACK_URL
lab_loopback_server "$bin" "$work/b" --tpc-allow '127.0.0.1:*'; bpid=$LAB_LOOPBACK_PID; B=$LAB_LOOPBACK_URL
sleep 0.3

# Runs pxfer "$@", prints "SECONDS CLIENT_BYTES": wall time and the last rchar + wchar seen.
timed() {
  local start end io=0 pid
  start=$(date +%s.%N)
  "$bin/pxfer" "$@" >"$work/out" 2>"$work/err" & pid=$!
  while kill -0 "$pid" 2>/dev/null; do
    io=$(awk '/^(rchar|wchar):/ {n += $2} END {printf "%.0f\n", n}' "/proc/$pid/io" 2>/dev/null || echo "$io")
    sleep 0.02
  done
  wait "$pid" || { echo "tpc.sh: pxfer $* failed: $(cat "$work/err")" >&2; exit 1; }
  end=$(date +%s.%N)
  echo "$(echo "$end - $start" | bc -l) $io"
}
mbps() { echo "scale=1; $bytes / $1 / 1000000" | bc -l; }

printf '%-5s %9s %9s %9s %7s %7s %14s %14s %14s\n' round "put MB/s" "pull" "push" pull/put push/put \
  "put client B" "pull client B" "push client B"
for r in $(seq "$rounds"); do
  # One destination file at a time (checked, then removed): /dev/shm holds the source and one copy.
  check() { cmp -s "$work/a/root/src.bin" "$work/b/root/$1.bin" || { echo "round $r: $1.bin differs" >&2; exit 1; }; rm -f "$work/b/root/$1.bin"; }
  run_put() { read -r tput ioput < <(timed put -p "$streams" "$work/client/src.bin" "$B/put.bin"); check put; }
  run_pull() { read -r tpull iopull < <(timed cp --copy-mode pull -p "$streams" "$A/src.bin" "$B/pull.bin"); check pull; }
  run_push() { read -r tpush iopush < <(timed cp --copy-mode push -p "$streams" "$A/src.bin" "$B/push.bin"); check push; }
  # The order turns each round, so that no kind always runs first (or right after another).
  case $((r % 3)) in
    1) run_put; run_pull; run_push ;;
    2) run_pull; run_push; run_put ;;
    0) run_push; run_put; run_pull ;;
  esac
  printf '%-5s %9s %9s %9s %7.2f %7.2f %14s %14s %14s\n' "$r" "$(mbps "$tput")" "$(mbps "$tpull")" "$(mbps "$tpush")" \
    "$(echo "$tput / $tpull" | bc -l)" "$(echo "$tput / $tpush" | bc -l)" "$ioput" "$iopull" "$iopush"
done
echo "size $bytes bytes, $streams streams; MB = 10^6 bytes, rates from wall time around each pxfer command"
