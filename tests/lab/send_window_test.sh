#!/bin/bash
# Lab test: a data stream that its send buffer holds pins a larger one (issue 39: the window per
# stream when autotuning stops below what the stream needs; pxfer/core/send_window.hpp).
#
# usage: send_window_test.sh PATH/TO/pxfer-wanem PATH/TO/pxfer PATH/TO/pxferd
# exit:  0 pass, 1 fail, 77 skipped (not root, no /dev/net/tun, no python3)
#
# Link: 50 ms each way (RTT 100 ms), no loss, 400 Mbit/s, MTU 1500. One reno stream (`-p 1`)
# keeps in flight what its send buffer holds: autotuning stops at net.ipv4.tcp_wmem's maximum
# (4 MiB), about 240 Mbit/s at 100 ms, below the link's 400. A put (pxfer sends) and a get
# (pxferd sends) of 192 MiB each. Where a pinned buffer can be larger (2 x net.core.wmem_max,
# inherited from the host: 8 MiB on the CI's VM), the sending stream must pin it and say so: the
# put in its summary (`send_window`), the get in pxferd's log. Where it cannot (Debian's default
# wmem_max of 208 KiB), each must say what would let it. Figures are printed, not checked.
# No packet leaves the two namespaces the test creates.
set -u

WANEM=${1:?usage: send_window_test.sh PXFER_WANEM PXFER PXFERD}
PXFER=${2:?usage: send_window_test.sh PXFER_WANEM PXFER PXFERD}
PXFERD=${3:?usage: send_window_test.sh PXFER_WANEM PXFER PXFERD}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
LIB=$HERE/../../bench/lab/lib.sh

LAB_TEST_NAME=pxsw LAB_TEST_TAG=sndbuf
# shellcheck source=lab_test_setup.sh
source "$HERE/lab_test_setup.sh"

START=$SECONDS
lab_link_up --delay 50 --rate 400mbit --seed 7 || exit 1
lab_sysctl_both net.ipv4.tcp_no_metrics_save=1 || exit 1
lab_server_start || exit 1
truncate -s 192M "$LAB_WORK/srv/src.bin"
truncate -s 192M "$LAB_WORK/up.bin"
mkdir -p "$LAB_WORK/cli"

wmem_max=$(ip netns exec "$LAB_NAME-a" cat /proc/sys/net/core/wmem_max)
autotune_max=$(ip netns exec "$LAB_NAME-a" awk '{print $3}' /proc/sys/net/ipv4/tcp_wmem)
# SendWindowSettings::worth: a pin must give a quarter more than autotuning's maximum.
if ((2 * wmem_max * 4 >= 5 * autotune_max)); then can_pin=1; else can_pin=0; fi
echo "  net.core.wmem_max $wmem_max, tcp_wmem's maximum $autotune_max: a pin can go past autotuning: $can_pin"

put_out=$LAB_WORK/put.ndjson get_out=$LAB_WORK/get.ndjson
rc_put=$(lab_pxfer 90 "$put_out" put -p 1 --congestion reno "$LAB_WORK/up.bin" "$(lab_url up.bin)")
rc_get=$(lab_pxfer 90 "$get_out" get -p 1 --congestion reno "$(lab_url src.bin)" "$LAB_WORK/cli/")
read -r -a fp <<<"$(lab_summary "$put_out")"
read -r -a fg <<<"$(lab_summary "$get_out")"
put_window=$(python3 - "$put_out" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    if line.startswith("{"):
        e = json.loads(line)
        if e.get("event") == "summary":
            print(e.get("send_window", "-"))
PY
)
get_log=$(grep -o "get: stream 0: .*" "$LAB_WORK/pxferd.log" || true)
echo "  put: state ${fp[0]} (exit $rc_put), ${fp[3]} s, average ${fp[1]} MB/s; send buffers: $put_window"
echo "  get: state ${fg[0]} (exit $rc_get), ${fg[3]} s, average ${fg[1]} MB/s; pxferd: ${get_log:--}"
lab_cleanup
lab_counters
echo "$((SECONDS - START)) s"

failed=0
if [[ ${fp[0]} != done || ${fg[0]} != done ]]; then
  echo "FAIL: a transfer did not finish"; cat "$put_out" "$put_out.err" "$get_out" "$get_out.err"; exit 1
fi
if ((can_pin)); then
  want="send buffer pinned at "
  [[ $put_window == "pinned on 1 stream, up to "*"; the first: $want"* ]] || { echo "FAIL: the put's stream did not pin its send buffer"; failed=1; }
  [[ $get_log == *"$want"* ]] || { echo "FAIL: pxferd's sending stream did not pin its send buffer"; cat "$LAB_WORK/pxferd.log"; failed=1; }
else
  want="the kernel pins no larger one"
  [[ $put_window == *"$want"* ]] || { echo "FAIL: the put did not say why its send buffer stayed"; failed=1; }
  [[ $get_log == *"$want"* ]] || { echo "FAIL: pxferd did not say why its send buffer stayed"; failed=1; }
fi
((failed)) || echo "ok: both sending streams said what held them and did what the host allows"
exit $failed
