#!/bin/bash
# Measures the throughput ceiling of pxfer-wanem (no impairments) against references:
# a plain veth pair between two namespaces and loopback inside one namespace, all in one
# run on the same machine. Prints one line per case; docs/wanem.md quotes its output.
# usage (root): measure_throughput.sh PATH/TO/pxfer-wanem [SECONDS]
# Traffic stays inside namespaces this script creates (10.77.0.1 <-> 10.77.0.2, or lo).
set -eu
WANEM=${1:?usage: measure_throughput.sh PATH/TO/pxfer-wanem [SECONDS]}
SECONDS_PER_RUN=${2:-10}
REF=pxwref
WORK=$(mktemp -d)
trap 'ip netns del $REF-a 2>/dev/null; ip netns del $REF-b 2>/dev/null; rm -rf "$WORK"' EXIT

# iperf3_between CLIENT_NS SERVER_NS SERVER_ADDR -> receiver Mbit/s
iperf3_between() {
  ip netns exec "$2" iperf3 -s -1 >/dev/null 2>&1 &
  local server=$!
  sleep 0.3
  ip netns exec "$1" iperf3 -c "$3" -t "$SECONDS_PER_RUN" -f m |
    awk '/receiver/ { for (i = 1; i < NF; i++) if ($(i + 1) == "Mbits/sec") print $i }'
  wait "$server"
}

wanem_case() {
  local mtu=$1
  "$WANEM" up --name pxwbench --mtu "$mtu" --ready-file "$WORK/ready" >"$WORK/out" 2>&1 &
  local pid=$!
  for _ in $(seq 100); do [[ -f $WORK/ready ]] && break; sleep 0.05; done
  printf 'pxfer-wanem  mtu %-5s %8s Mbit/s\n' "$mtu" "$(iperf3_between pxwbench-a pxwbench-b 10.77.0.2)"
  kill -TERM "$pid"
  wait "$pid"
}

veth_case() {
  local mtu=$1
  ip netns add $REF-a
  ip netns add $REF-b
  ip link add pxwref0 mtu "$mtu" netns $REF-a type veth peer name pxwref1 mtu "$mtu" netns $REF-b
  ip -n $REF-a addr add 10.77.0.1/24 dev pxwref0
  ip -n $REF-b addr add 10.77.0.2/24 dev pxwref1
  for ns in $REF-a $REF-b; do ip -n $ns link set lo up; done
  ip -n $REF-a link set pxwref0 up
  ip -n $REF-b link set pxwref1 up
  printf 'veth         mtu %-5s %8s Mbit/s\n' "$mtu" "$(iperf3_between $REF-a $REF-b 10.77.0.2)"
  ip netns del $REF-a
  ip netns del $REF-b
}

loopback_case() {
  ip netns add $REF-a
  ip -n $REF-a link set lo up
  printf 'loopback     mtu %-5s %8s Mbit/s\n' 65536 "$(iperf3_between $REF-a $REF-a 127.0.0.1)"
  ip netns del $REF-a
}

echo "iperf3 single TCP stream, ${SECONDS_PER_RUN} s, $(nproc) cores, kernel $(uname -r)"
wanem_case 9000
wanem_case 1500
veth_case 9000
veth_case 1500
loopback_case
