#!/bin/bash
# Lab test (issue 5): the network is cut for 10 s in the middle of a put over the emulated WAN,
# then restored; the transfer must finish byte-identical (or fail with a clear error, never hang
# and never leave a wrong file under its final name).
#
# usage: network_cut_test.sh PATH/TO/pxfer-wanem PATH/TO/pxfer PATH/TO/pxferd
# exit:  0 pass, 1 fail, 77 skipped (not root, no /dev/net/tun, lab busy)
#
# Link: 10 ms each way, 100 Mbit/s. pxfer (namespace NAME-a) puts 48 MiB with 4 streams,
# --stall-timeout 5s and --retries 5 to pxferd (NAME-b). 1.5 s in, both ends of the emulated link go down (`ip link set
# wan0 down`: every packet in flight and every new one is lost) for 10 s, then come back up.
# No packet leaves the two namespaces the test creates.
# Why 5 retries: since the control heartbeat (issue 16) the stall is seen 5 s into the cut, and the
# retries that follow fail at once ("Network is unreachable"); their pauses are 1, 2, 4, 8 s with
# +-50 % jitter (pxfer/core/retry.hpp), so 3 retries may pause only 3.5 s in all, less than the 5 s of
# cut left, while 5 pause at least 7.5 s. (With 3 it failed once in two clean runs.)
set -u
WANEM=${1:?usage: network_cut_test.sh PXFER_WANEM PXFER PXFERD}
PXFER=${2:?}
PXFERD=${3:?}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
if [[ $(id -u) -ne 0 || ! -c /dev/net/tun ]]; then echo "SKIP: needs root and /dev/net/tun"; exit 77; fi
for tool in ip python3 flock timeout cmp; do
  command -v "$tool" >/dev/null || { echo "SKIP: needs '$tool'"; exit 77; }
done
# shellcheck source=../../bench/lab/lib.sh
source "$HERE/../../bench/lab/lib.sh"
LAB_NAME="pxcut$$"
LAB_WORK=$(mktemp -d /dev/shm/pxlab-cut.XXXXXX)
mkdir -p "$LAB_WORK/bin" "$LAB_WORK/cli"
cp "$WANEM" "$PXFER" "$PXFERD" "$LAB_WORK/bin/" || exit 1
LAB_WANEM=$LAB_WORK/bin/$(basename "$WANEM")
LAB_PXFER=$LAB_WORK/bin/$(basename "$PXFER")
LAB_PXFERD=$LAB_WORK/bin/$(basename "$PXFERD")
cleanup() { lab_cleanup; "$LAB_WANEM" down --name "$LAB_NAME" >/dev/null 2>&1; rm -rf "$LAB_WORK"; }
trap cleanup EXIT
trap 'exit 1' INT TERM
# A busy lab is not something this machine lacks: failing says the cut was never tried.
if ! lab_lock /tmp/pxfer-lab.lock 120; then echo "FAIL: the lab lock stayed busy for 120 s; the cut was not tested"; exit 1; fi

# True when wan0 in namespace $1 has the UP flag (ip's own view, not ours).
link_is_up() { ip -n "$1" -o link show wan0 | grep -Eq '<([^>]*,)?UP(,[^>]*)?>'; }
# Sets wan0 in namespace $1 $2 (up/down) and checks it happened; exits 1 when it did not.
set_link() {
  if ! ip -n "$1" link set wan0 "$2"; then echo "FAIL: ip link set wan0 $2 in $1 failed"; exit 1; fi
  local want=0; [[ $2 == up ]] || want=1
  link_is_up "$1"; local is=$?
  if [[ $is -ne $want ]]; then echo "FAIL: wan0 in $1 is not $2 after 'ip link set wan0 $2':"; ip -n "$1" link show wan0; exit 1; fi
}

lab_link_up --delay 10 --rate 100mbit --seed 11 || exit 1
lab_server_start || exit 1
head -c $((48 * 1048576)) /dev/urandom >"$LAB_WORK/cli/src.bin"

start=$SECONDS
ip netns exec "$LAB_NAME-a" env PXFER_TOKEN="$PXFER_TOKEN" PXFER_KNOWN_HOSTS="$PXFER_KNOWN_HOSTS" \
  timeout 120 "$LAB_PXFER" put -p 4 --retries 5 --stall-timeout 5s "$LAB_WORK/cli/src.bin" "$(lab_url dst.bin)" \
  >"$LAB_WORK/out.txt" 2>"$LAB_WORK/err.txt" &
client=$!
sleep 1.5
for ns in "$LAB_NAME-a" "$LAB_NAME-b"; do link_is_up "$ns" || { echo "FAIL: wan0 in $ns was not up before the cut"; exit 1; }; done
# The cut must land while the transfer is in flight: the client still running, the file not there.
if ! kill -0 "$client" 2>/dev/null || [[ -e $LAB_WORK/srv/dst.bin ]]; then
  echo "FAIL: the put had already ended 1.5 s in; the cut would not overlap it"; cat "$LAB_WORK/err.txt"; exit 1
fi
set_link "$LAB_NAME-a" down
set_link "$LAB_NAME-b" down
cut_at=$SECONDS
echo "network cut at $((SECONDS - start)) s"
sleep 10
still_running=0
kill -0 "$client" 2>/dev/null && still_running=1
set_link "$LAB_NAME-a" up
set_link "$LAB_NAME-b" up
echo "network back at $((SECONDS - start)) s"
wait "$client"; rc=$?
echo "pxfer exit $rc after $((SECONDS - start)) s"
cat "$LAB_WORK/err.txt"
tail -2 "$LAB_WORK/out.txt"
if [[ $rc -eq 124 ]]; then echo "FAIL: the transfer hung for 120 s"; exit 1; fi
# The cut overlapped the transfer: it was still running when the link came back (48 MiB at
# 100 Mbit/s needs about 4 s of link; 10 s without one cannot end it), and it noticed the cut
# (a stalled or failed stream, a retry, a reconnection), which a transfer that never lost its
# link does not print.
if [[ $still_running -ne 1 ]]; then echo "FAIL: pxfer ended during the cut (exit $rc); the cut was not ridden out"; exit 1; fi
if ! grep -Eqi 'stall|retrying|reconnect|failed' "$LAB_WORK/err.txt"; then
  echo "FAIL: pxfer printed nothing about the cut on stderr; did the cut reach it?"; exit 1
fi
echo "the transfer ran across the whole cut ($cut_at s to $((cut_at + 10)) s after the start of the script)"
if [[ $rc -eq 0 ]]; then
  cmp -s "$LAB_WORK/cli/src.bin" "$LAB_WORK/srv/dst.bin" || { echo "FAIL: dst.bin differs from its source"; exit 1; }
  echo "PASS: byte-identical after a 10 s cut"
  exit 0
fi
# A failure must be one clear line and leave nothing under the final name.
if [[ -e $LAB_WORK/srv/dst.bin ]]; then echo "FAIL: dst.bin exists after a failed transfer"; exit 1; fi
echo "FAIL: the transfer did not survive the cut (exit $rc)"
exit 1
