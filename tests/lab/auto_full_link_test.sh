#!/bin/bash
# Lab test: -p auto keeps a long path's start when those streams already fill the link (issue 39).
#
# usage: auto_full_link_test.sh PATH/TO/pxfer-wanem PATH/TO/pxfer PATH/TO/pxferd
# exit:  0 pass, 1 fail, 77 skipped (not root, no /dev/net/tun, no python3)
#
# Link: 10 ms each way (RTT 20 ms), no loss, 100 Mbit/s behind a queue of one BDP, MTU 1500.
# Auto starts a 20 ms path with 7 streams (a stream per 3 ms of RTT). Seven reno streams fill
# 100 Mbit/s and keep the queue standing (the RTT well above 20 ms), so the first measurement must
# keep 7 ("7 streams fill the path ... with a standing queue") instead of doubling to 14, which
# only overflows the queue (StreamControllerSettings::full_rtt). Before that rule: 7 -> 14, then
# shed back. `pxfer get --congestion reno -p auto` of 128 MiB (~11 s) runs to its end.
# No packet leaves the two namespaces the test creates.
set -u

WANEM=${1:?usage: auto_full_link_test.sh PXFER_WANEM PXFER PXFERD}
PXFER=${2:?usage: auto_full_link_test.sh PXFER_WANEM PXFER PXFERD}
PXFERD=${3:?usage: auto_full_link_test.sh PXFER_WANEM PXFER PXFERD}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
LIB=$HERE/../../bench/lab/lib.sh

LAB_TEST_NAME=pxfl LAB_TEST_TAG=full
# shellcheck source=lab_test_setup.sh
source "$HERE/lab_test_setup.sh"

START=$SECONDS
lab_link_up --delay 10 --rate 100mbit --seed 7 || exit 1
lab_sysctl_both net.ipv4.tcp_no_metrics_save=1 || exit 1
lab_server_start || exit 1
truncate -s 128M "$LAB_WORK/srv/src.bin"
mkdir -p "$LAB_WORK/cli"

out=$LAB_WORK/auto.ndjson
rc=$(lab_pxfer 60 "$out" get -p auto --stream-stats --congestion reno "$(lab_url src.bin)" "$LAB_WORK/cli/")
read -r -a f <<<"$(lab_summary "$out")"
steps=$(python3 - "$out" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    if line.startswith("{"):
        e = json.loads(line)
        if e.get("event") == "streams":
            print(e.get("message", ""))
        if e.get("event") == "summary":
            print("choice: " + e.get("streams_auto", "-"))
PY
)
echo "  auto: state ${f[0]} (exit $rc), ${f[3]} s, average ${f[1]} MB/s"
sed 's/^/    /' <<<"$steps"
lab_cleanup
lab_counters
echo "$((SECONDS - START)) s"

failed=0
if [[ ${f[0]} != done ]]; then
  echo "FAIL: the -p auto get did not finish"; cat "$out" "$out.err"; exit 1
fi
if ! grep -q "streams: 4 -> 7 streams (RTT" <<<"$steps"; then
  echo "FAIL: auto did not start this 20 ms path with 7 streams"; failed=1
fi
if grep -q "streams: 7 -> " <<<"$steps"; then
  echo "FAIL: auto grew the 7 streams that fill the link"; failed=1
fi
if grep -q "^choice: auto 7 (.*7 streams fill the path: [0-9]* Mbit/s with a standing queue)" <<<"$steps"; then
  echo "ok: auto kept the 7 streams that fill the link and said why"
else
  echo "FAIL: the choice does not say that 7 streams fill the path"; failed=1
fi
exit $failed
