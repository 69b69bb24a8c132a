#!/bin/bash
# Lab test: parallel streams beat a single stream on a lossy long link (a short version of
# experiment (a) in docs/experiments.md).
#
# usage: streams_under_loss_test.sh PATH/TO/pxfer-wanem PATH/TO/pxfer PATH/TO/pxferd
# exit:  0 pass, 1 fail, 77 skipped (not root, no /dev/net/tun, no python3, lab busy)
#
# Link: 20 ms each way (RTT 40 ms), 0.1 % random loss each way (seed 7), 200 Mbit/s, MTU 1500.
# pxferd runs in namespace NAME-b (10.77.0.2); `pxfer get --congestion reno` runs in NAME-a
# (10.77.0.1) with 1 stream, then with 8 streams, each stopped after 12 s. The rate counted is
# the steady one, after the first 2 s (bytes received by the client: a get).
# Mathis: 1448 B / (0.040 s * sqrt(0.001)) = 1.1 MB/s per reno stream, so 8 streams (9 MB/s,
# below the link's 24 MB/s) should move about 8x one stream; the test asks for at least 3x.
# No packet leaves the two namespaces the test creates.
set -u

WANEM=${1:?usage: streams_under_loss_test.sh PXFER_WANEM PXFER PXFERD}
PXFER=${2:?usage: streams_under_loss_test.sh PXFER_WANEM PXFER PXFERD}
PXFERD=${3:?usage: streams_under_loss_test.sh PXFER_WANEM PXFER PXFERD}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
LIB=$HERE/../../bench/lab/lib.sh

LAB_TEST_NAME=pxlt LAB_TEST_TAG=test
# shellcheck source=lab_test_setup.sh
source "$HERE/lab_test_setup.sh"

START=$SECONDS
LIMIT=12
WARMUP=2
lab_link_up --delay 20 --loss 0.1% --rate 200mbit --seed 7 || exit 1
lab_sysctl_both net.ipv4.tcp_no_metrics_save=1 \
  net.ipv4.tcp_rmem="4096 131072 33554432" net.ipv4.tcp_wmem="4096 16384 33554432" || exit 1
lab_server_start || exit 1
truncate -s 256M "$LAB_WORK/srv/src.bin"

# measure N: sets RATE to the steady MB/s of a get with N streams ("" when the run failed).
measure() {
  local n=$1 out="$LAB_WORK/get-$1.ndjson" rc f
  RATE=""
  mkdir -p "$LAB_WORK/cli"
  rc=$(lab_pxfer "$LIMIT" "$out" get -p "$n" --congestion reno "$(lab_url src.bin)" "$LAB_WORK/cli/")
  rm -rf "$LAB_WORK/cli"
  read -r -a f <<<"$(lab_summary "$out" --warmup "$WARMUP")"
  echo "  $n stream(s): state ${f[0]} (exit $rc), ${f[3]} s, average ${f[1]} MB/s, steady ${f[2]} MB/s, machine CPU busy $(cut -d' ' -f1 "$out.cpu") %"
  if [[ ${f[0]} == error || ${f[2]} == - ]]; then
    echo "  pxfer output:"
    cat "$out" "$out.err"
    echo "  pxferd log:"
    cat "$LAB_WORK/pxferd.log"
    return 0
  fi
  RATE=${f[2]}
}

echo "link: 20 ms each way, 0.1 % loss, 200 Mbit/s; pxfer get --congestion reno, ${LIMIT} s per run"
measure 1
one=$RATE
sleep 1
measure 8
eight=$RATE
lab_cleanup
lab_counters
# The fault itself, from the emulator's counters rather than from the rates: the link the gets
# came over (b -> a, the server sends) really lost about 0.1 % of its packets.
if ! python3 - "$LAB_WORK/counters.json" <<'EOF'
import json, sys
try:
    x = json.load(open(sys.argv[1]))["b_to_a"]
except (OSError, ValueError, KeyError) as e:
    print(f"FAIL: no emulator counters ({e}): cannot tell whether the loss happened")
    sys.exit(1)
sent, lost = x["forwarded_packets"] + x["lost_packets"], x["lost_packets"]
share = lost / sent if sent else 0
if sent < 10000 or not 0.0003 <= share <= 0.003:
    print(f"FAIL: the emulated link lost {lost} of {sent} packets ({share:.4%}), not about 0.1 %")
    sys.exit(1)
print(f"loss as configured: {lost} of {sent} packets ({share:.3%}) lost server -> client")
EOF
then
  exit 1
fi

if [[ -z $one || -z $eight ]]; then
  echo "FAIL: a transfer did not produce a rate (see its output above)"
  exit 1
fi
ratio=$(awk -v a="$eight" -v b="$one" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }')
echo "1 stream: $one MB/s, 8 streams: $eight MB/s, ratio $ratio (need >= 3; Mathis predicts 8); $((SECONDS - START)) s"
if awk -v r="$ratio" 'BEGIN { exit !(r >= 3) }'; then
  echo "ok: 8 streams moved ${ratio}x what 1 stream moved"
  exit 0
fi
echo "FAIL: 8 streams moved only ${ratio}x what 1 stream moved (expected >= 3)"
exit 1
