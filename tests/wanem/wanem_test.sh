#!/bin/bash
# End-to-end test of pxfer-wanem: builds a real emulated link between two namespaces and
# checks delay (ping RTT), rate (iperf3), loss (ping loss and counters), clean shutdown
# (namespaces gone, counters printed and written) and input validation.
# usage: wanem_test.sh PATH/TO/pxfer-wanem        exit: 0 pass, 1 fail, 77 skipped
# All traffic stays inside the two namespaces the test creates (SUBNET.1 <-> SUBNET.2).
set -u

WANEM=${1:?usage: wanem_test.sh PATH/TO/pxfer-wanem}
if [[ $(id -u) -ne 0 || ! -c /dev/net/tun ]]; then
  echo "SKIP: needs root and /dev/net/tun"
  exit 77
fi
for tool in ip ping iperf3; do
  if ! command -v "$tool" >/dev/null; then
    echo "SKIP: needs '$tool' (apt-get install iproute2 iputils-ping iperf3)"
    exit 77
  fi
done

NAME="wnt$$"
SUBNET=10.77.0
WORK=$(mktemp -d)
WANEM_PID=""
IPERF_PID=""
PASSED=0
FAILED=0

cleanup() {
  [[ -n $IPERF_PID ]] && kill "$IPERF_PID" 2>/dev/null
  if [[ -n $WANEM_PID ]]; then
    kill -TERM "$WANEM_PID" 2>/dev/null
    wait "$WANEM_PID" 2>/dev/null
  fi
  "$WANEM" down --name "$NAME" >/dev/null 2>&1
  rm -rf "$WORK"
}
trap cleanup EXIT

pass() { echo "ok: $*"; PASSED=$((PASSED + 1)); }
fail() { echo "FAIL: $*"; FAILED=$((FAILED + 1)); }
# in_range VALUE LOW HIGH: true when LOW <= VALUE <= HIGH (decimals allowed)
in_range() { awk -v v="$1" -v lo="$2" -v hi="$3" 'BEGIN { exit !(v != "" && v >= lo && v <= hi) }'; }

# start_link ARGS...: runs `pxfer-wanem up` in the background and waits for its ready file.
start_link() {
  rm -f "$WORK/ready"
  "$WANEM" up --name "$NAME" --subnet "$SUBNET" --ready-file "$WORK/ready" \
    --counters-file "$WORK/counters.json" "$@" >"$WORK/out" 2>"$WORK/err" &
  WANEM_PID=$!
  for _ in $(seq 100); do
    [[ -f $WORK/ready ]] && return 0
    if ! kill -0 "$WANEM_PID" 2>/dev/null; then break; fi
    sleep 0.05
  done
  echo "pxfer-wanem did not come up; its output:"; cat "$WORK/out" "$WORK/err"
  exit 1
}

# stop_link: SIGTERM, then checks the exit status, the clean-up and the counters.
stop_link() {
  kill -TERM "$WANEM_PID"
  wait "$WANEM_PID"
  local status=$?
  WANEM_PID=""
  [[ $status -eq 0 ]] && pass "exit status 0 after SIGTERM" || fail "exit status $status after SIGTERM: $(cat "$WORK/err")"
  if ip netns list | grep -qE "^$NAME-(a|b)( |$)"; then
    fail "namespaces $NAME-a/$NAME-b still exist after exit"
  else
    pass "namespaces removed"
  fi
  [[ ! -e $WORK/ready ]] && pass "ready file removed" || fail "ready file left behind"
  if grep -q "a->b: forwarded" "$WORK/out" && grep -q "b->a: forwarded" "$WORK/out"; then
    pass "counters printed"
  else
    fail "no counters on stdout: $(cat "$WORK/out")"
  fi
  grep -q '"forwarded_packets"' "$WORK/counters.json" 2>/dev/null && pass "counters file written" ||
    fail "counters file missing or incomplete"
}

in_a() { ip netns exec "$NAME-a" "$@"; }
in_b() { ip netns exec "$NAME-b" "$@"; }

echo "== delay 20 ms each way, rate 100 Mbit/s"
start_link --delay 20 --rate 100mbit --seed 1
rtt=$(in_a ping -c 5 -i 0.2 -q "$SUBNET.2" | awk -F/ '/^rtt|^round-trip/ { print $5 }')
in_range "$rtt" 38 60 && pass "ping RTT $rtt ms (expected 38-60)" || fail "ping RTT '$rtt' ms, expected 38-60"

in_b iperf3 -s -1 >/dev/null 2>&1 &
IPERF_PID=$!
sleep 0.3
rate=$(in_a iperf3 -c "$SUBNET.2" -t 2 -f m | awk '/receiver/ { for (i = 1; i < NF; i++) if ($(i + 1) == "Mbits/sec") print $i }')
wait "$IPERF_PID" 2>/dev/null
IPERF_PID=""
in_range "$rate" 70 105 && pass "iperf3 $rate Mbit/s (expected 70-105)" || fail "iperf3 '$rate' Mbit/s, expected 70-105"
stop_link
queue_drops=$(grep -o '"queue_dropped_packets": [0-9]*' "$WORK/counters.json" | head -1 | grep -o '[0-9]*$')
echo "   (a->b queue overflow drops: ${queue_drops:-?})"

echo "== loss 1% each way"
start_link --loss 1% --seed 7
loss=$(in_a ping -c 400 -i 0.005 -q "$SUBNET.2" | grep -o '[0-9.]*% packet loss' | grep -o '^[0-9.]*')
# 1 - 0.99^2 = 2 % of round trips expected; 400 pings make 0.25-6 % a wide, safe band.
in_range "$loss" 0.25 6 && pass "ping loss $loss % (expected about 2)" || fail "ping loss '$loss' %, expected 0.25-6"
stop_link
lost=$(grep -o '"lost_packets": [0-9]*' "$WORK/counters.json" | awk '{ s += $2 } END { print s + 0 }')
[[ $lost -gt 0 ]] && pass "counters show $lost packets lost" || fail "counters show no loss"

echo "== input validation and down"
if "$WANEM" up --name "$NAME" --rate 100mbps >/dev/null 2>"$WORK/err"; then
  fail "'--rate 100mbps' accepted"
elif [[ $(wc -l <"$WORK/err") -eq 1 ]] && grep -q -- "--rate" "$WORK/err"; then
  pass "bad input rejected with one line: $(cat "$WORK/err")"
else
  fail "bad input message is not one line naming the option: $(cat "$WORK/err")"
fi
"$WANEM" down --name "$NAME" >/dev/null && pass "down with nothing to remove exits 0" || fail "down failed"

echo "$PASSED passed, $FAILED failed"
[[ $FAILED -eq 0 ]]
