#!/bin/bash
# Lab test (issue 5): the network is cut for 10 s in the middle of a put over the emulated WAN,
# then restored; the transfer must finish byte-identical (or fail with a clear error, never hang
# and never leave a wrong file under its final name).
#
# usage: network_cut_test.sh PATH/TO/pxfer-wanem PATH/TO/pxfer PATH/TO/pxferd
# exit:  0 pass, 1 fail, 77 skipped (not root, no /dev/net/tun, lab busy)
#
# Link: 10 ms each way, 100 Mbit/s. pxfer (namespace NAME-a) puts 48 MiB with 4 streams,
# --stall-timeout 5s and --retries 3 to pxferd (NAME-b). 1.5 s in, both ends of the emulated link go down (`ip link set
# wan0 down`: every packet in flight and every new one is lost) for 10 s, then come back up.
# No packet leaves the two namespaces the test creates.
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
if ! lab_lock /tmp/pxfer-lab.lock 120; then echo "SKIP: the lab lock stayed busy for 120 s"; exit 77; fi

lab_link_up --delay 10 --rate 100mbit --seed 11 || exit 1
lab_server_start || exit 1
head -c $((48 * 1048576)) /dev/urandom >"$LAB_WORK/cli/src.bin"

start=$SECONDS
ip netns exec "$LAB_NAME-a" env PXFER_TOKEN="$PXFER_TOKEN" PXFER_KNOWN_HOSTS="$PXFER_KNOWN_HOSTS" \
  timeout 120 "$LAB_PXFER" put -p 4 --retries 3 --stall-timeout 5s "$LAB_WORK/cli/src.bin" "$(lab_url dst.bin)" \
  >"$LAB_WORK/out.txt" 2>"$LAB_WORK/err.txt" &
client=$!
sleep 1.5
ip netns exec "$LAB_NAME-a" ip link set wan0 down
ip netns exec "$LAB_NAME-b" ip link set wan0 down
echo "network cut at $((SECONDS - start)) s"
sleep 10
ip netns exec "$LAB_NAME-a" ip link set wan0 up
ip netns exec "$LAB_NAME-b" ip link set wan0 up
echo "network back at $((SECONDS - start)) s"
wait "$client"; rc=$?
echo "pxfer exit $rc after $((SECONDS - start)) s"
cat "$LAB_WORK/err.txt"
tail -2 "$LAB_WORK/out.txt"
if [[ $rc -eq 124 ]]; then echo "FAIL: the transfer hung for 120 s"; exit 1; fi
if [[ $rc -eq 0 ]]; then
  cmp -s "$LAB_WORK/cli/src.bin" "$LAB_WORK/srv/dst.bin" || { echo "FAIL: dst.bin differs from its source"; exit 1; }
  echo "PASS: byte-identical after a 10 s cut"
  exit 0
fi
# A failure must be one clear line and leave nothing under the final name.
if [[ -e $LAB_WORK/srv/dst.bin ]]; then echo "FAIL: dst.bin exists after a failed transfer"; exit 1; fi
echo "FAIL: the transfer did not survive the cut (exit $rc)"
exit 1
