#!/bin/bash
# Lab test: -p auto on a lossy long link ends with more streams than it started with and moves
# more than one stream does (issue 39).
#
# usage: auto_streams_test.sh PATH/TO/pxfer-wanem PATH/TO/pxfer PATH/TO/pxferd
# exit:  0 pass, 1 fail, 77 skipped (not root, no /dev/net/tun, no python3)
#
# Link: 25 ms each way (RTT 50 ms), 0.1 % random loss each way (seed 11), 200 Mbit/s, MTU 1500.
# Mathis: 1448 B / (0.050 s * sqrt(0.001)) = 0.92 MB/s per reno stream, so the 4 streams auto
# starts with carry ~3.7 MB/s and the link's 25 MB/s needs ~27: auto must add streams.
# `pxfer get --congestion reno -p auto` of 48 MiB runs to its end (its summary says where auto
# got to), then `-p 1` for 6 s; auto must end above 4 streams and at >= 2x one stream's rate.
# No packet leaves the two namespaces the test creates.
set -u

WANEM=${1:?usage: auto_streams_test.sh PXFER_WANEM PXFER PXFERD}
PXFER=${2:?usage: auto_streams_test.sh PXFER_WANEM PXFER PXFERD}
PXFERD=${3:?usage: auto_streams_test.sh PXFER_WANEM PXFER PXFERD}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
LIB=$HERE/../../bench/lab/lib.sh

LAB_TEST_NAME=pxat LAB_TEST_TAG=auto
# shellcheck source=lab_test_setup.sh
source "$HERE/lab_test_setup.sh"

START=$SECONDS
lab_link_up --delay 25 --loss 0.1% --rate 200mbit --seed 11 || exit 1
lab_sysctl_both net.ipv4.tcp_no_metrics_save=1 \
  net.ipv4.tcp_rmem="4096 131072 33554432" net.ipv4.tcp_wmem="4096 16384 33554432" || exit 1
lab_server_start || exit 1
truncate -s 48M "$LAB_WORK/srv/src.bin"
mkdir -p "$LAB_WORK/cli"

out=$LAB_WORK/auto.ndjson
rc=$(lab_pxfer 40 "$out" get -p auto --stream-stats --congestion reno "$(lab_url src.bin)" "$LAB_WORK/cli/")
rm -rf "$LAB_WORK/cli"
read -r -a f <<<"$(lab_summary "$out")"
read -r streams choice <<<"$(python3 - "$out" <<'EOF'
import json, sys
s = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
s = [e for e in s if e.get("event") == "summary"]
print(s[-1]["streams"], s[-1].get("streams_auto", "-").replace(" ", "_")) if s else print("- -")
EOF
)"
echo "  auto: state ${f[0]} (exit $rc), ${f[3]} s, average ${f[1]} MB/s, ended with $streams streams: ${choice//_/ }"
grep -h '"event": *"streams"' "$out" | head -8 | sed 's/^/    /'
if [[ ${f[0]} != done ]]; then
  echo "FAIL: the -p auto get did not finish"; cat "$out" "$out.err"; exit 1
fi
auto_rate=${f[1]}

mkdir -p "$LAB_WORK/cli"
out=$LAB_WORK/one.ndjson
rc=$(lab_pxfer 6 "$out" get -p 1 --congestion reno "$(lab_url src.bin)" "$LAB_WORK/cli/")
read -r -a f <<<"$(lab_summary "$out" --warmup 2)"
one_rate=${f[2]}
[[ $one_rate == - ]] && one_rate=${f[1]}
echo "  -p 1: state ${f[0]} (exit $rc), steady $one_rate MB/s"
lab_cleanup
lab_counters
echo "$((SECONDS - START)) s"

failed=0
if [[ $streams == - || $streams -le 4 ]]; then
  echo "FAIL: -p auto ended with ${streams} streams, not more than the 4 it starts with"; failed=1
else
  echo "ok: -p auto grew from 4 to $streams streams"
fi
if awk -v a="$auto_rate" -v b="$one_rate" 'BEGIN { exit !(b > 0 && a >= 2 * b) }'; then
  echo "ok: -p auto moved $auto_rate MB/s, one stream $one_rate MB/s"
else
  echo "FAIL: -p auto moved $auto_rate MB/s, one stream $one_rate MB/s (need >= 2x)"; failed=1
fi
exit $failed
