#!/bin/bash
# bench/wan_fairness.sh: does an untuned pxfer (-p auto) leave its neighbours their share of a
# link? (issue 39). Through the emulated WAN (pxfer-wanem, docs/wanem.md), per round:
#   pair    two untuned `pxfer get` started together on one link; each one's share is its bytes
#           at the moment the first one finishes over both transfers' bytes then (0.5 = fair)
#   iperf3  an untuned `pxfer get` beside `iperf3 -R -P 1` (one reno/cubic/bbr flow from the
#           server's side, as the get's data, started 2 s earlier and running throughout); pxfer's
#           share of the bytes both moved while it ran
#
# usage: bench/wan_fairness.sh [options]      (root: it builds namespaces and TUN devices)
#   --rtt 50            round-trip time in ms (half each way)
#   --loss 0.01         random loss in percent, each way
#   --cc reno           namespace default congestion control
#   --rate 200mbit      the emulated bottleneck (one two untuned transfers can fill)
#   --size 256M         each pxfer file
#   --rounds 2
#   --bin DIR           pxfer, pxferd and pxfer-wanem from DIR (default build/bin)
#   --out FILE          markdown results (default bench/results/wan-fairness.md)
# Every packet stays inside the two namespaces this script creates (10.77.0.1 <-> 10.77.0.2).
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
usage() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "${BASH_SOURCE[0]}"; }
RTT=50 LOSS=0.01 CC=reno RATE=200mbit SIZE=256M ROUNDS=2
BIN=$here/build/bin OUT=$here/bench/results/wan-fairness.md
while [[ $# -gt 0 ]]; do
  case $1 in
    --rtt) RTT=$2 ;; --loss) LOSS=$2 ;; --cc) CC=$2 ;; --rate) RATE=$2 ;; --size) SIZE=$2 ;;
    --rounds) ROUNDS=$2 ;; --bin) BIN=$2 ;; --out) OUT=$2 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "bench/wan_fairness.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
  shift 2 || { echo "bench/wan_fairness.sh: $1 needs a value" >&2; exit 2; }
done
[[ $(id -u) -eq 0 && -c /dev/net/tun ]] || { echo "bench/wan_fairness.sh: needs root and /dev/net/tun" >&2; exit 1; }
command -v iperf3 >/dev/null || { echo "bench/wan_fairness.sh: no iperf3 (apt-get install iperf3)" >&2; exit 1; }
WANEM_BIN=$BIN/pxfer-wanem
[[ -x $WANEM_BIN ]] || WANEM_BIN=$BIN/../wanem/pxfer-wanem
for f in "$BIN/pxfer" "$BIN/pxferd" "$WANEM_BIN"; do
  [[ -x $f ]] || { echo "bench/wan_fairness.sh: no $f; build it or pass --bin DIR" >&2; exit 1; }
done

# shellcheck source=lab/lib.sh
source "$here/bench/lab/lib.sh"
LAB_NAME="pxfair$$"
LAB_WORK=$(mktemp -d /dev/shm/pxfair.XXXXXX)
LAB_WANEM=$WANEM_BIN LAB_PXFER=$BIN/pxfer LAB_PXFERD=$BIN/pxferd
cleanup() {
  [[ -s $LAB_WORK/iperf3.pid ]] && kill "$(cat "$LAB_WORK/iperf3.pid")" 2>/dev/null
  lab_cleanup
  rm -rf "$LAB_WORK"
}
trap cleanup EXIT
trap 'exit 143' INT TERM
lab_lock /tmp/pxfer-lab.lock 600 || { echo "bench/wan_fairness.sh: the lab is busy" >&2; exit 1; }
mkdir -p "$LAB_WORK/srv" "$LAB_WORK/c1" "$LAB_WORK/c2"
for i in 1 2; do head -c "$(numfmt --from=iec "${SIZE%B}")" /dev/urandom >"$LAB_WORK/srv/f$i.bin"; done
lab_link_up --delay "$(awk -v r="$RTT" 'BEGIN { print r / 2 }')" --loss "$LOSS%" --rate "$RATE" --seed 1 || exit 1
lab_sysctl_both net.ipv4.tcp_congestion_control="$CC" net.ipv4.tcp_no_metrics_save=1 || exit 1
lab_server_start || exit 1
ip netns exec "$LAB_NAME-b" iperf3 -s -B "$LAB_B" -D -I "$LAB_WORK/iperf3.pid" 9>&- || exit 1
sleep 0.5

get() {  # get N OUT: untuned pxfer get of fN.bin, NDJSON with intervals every 0.5 s
  ip netns exec "$LAB_NAME-a" "$LAB_PXFER" get --json --perf-interval 0.5 "$(lab_url "f$1.bin")" "$LAB_WORK/c$1/" >"$2" 2>"$2.err"
}
# share.py MODE FILES...: the shares (see the header), one line of text.
share() {
  python3 - "$@" <<'PY'
import json, sys
def curve(path):
    pts, summary = [(0.0, 0)], None
    for line in open(path):
        e = json.loads(line)
        if e["event"] == "interval": pts.append((e["seconds"], e["bytes"]))
        if e["event"] == "summary": summary = e
    pts.append((summary["seconds"], summary["bytes"]))
    return pts, summary
def at(pts, t):
    for (t0, b0), (t1, b1) in zip(pts, pts[1:]):
        if t1 >= t: return b0 + (b1 - b0) * ((t - t0) / (t1 - t0) if t1 > t0 else 1)
    return pts[-1][1]
mode = sys.argv[1]
if mode == "pair":
    (p1, s1), (p2, s2) = curve(sys.argv[2]), curve(sys.argv[3])
    t = min(s1["seconds"], s2["seconds"])
    b1, b2 = at(p1, t), at(p2, t)
    print("shares %.2f / %.2f over the first %.1f s (%.0f + %.0f Mbit/s); %s | %s" % (
        b1 / (b1 + b2), b2 / (b1 + b2), t, b1 * 8 / t / 1e6, b2 * 8 / t / 1e6,
        s1.get("streams_auto", "fixed"), s2.get("streams_auto", "fixed")))
else:  # iperf3 JSON, pxfer NDJSON, pxfer's start offset in s from iperf3's start
    ip, (pp, ps), offset = json.load(open(sys.argv[2])), curve(sys.argv[3]), float(sys.argv[4])
    end = offset + ps["seconds"]
    ib = sum(i["sum"]["bytes"] * max(0.0, min(end, i["sum"]["end"]) - max(offset, i["sum"]["start"])) /
             (i["sum"]["end"] - i["sum"]["start"]) for i in ip["intervals"])
    pb = ps["bytes"]
    print("pxfer share %.2f over %.1f s (pxfer %.0f, iperf3 -P 1 %.0f Mbit/s); %s" % (
        pb / (pb + ib), ps["seconds"], pb * 8 / ps["seconds"] / 1e6, ib * 8 / ps["seconds"] / 1e6,
        ps.get("streams_auto", "fixed")))
PY
}

lines=()
for round in $(seq "$ROUNDS"); do
  find "$LAB_WORK/c1" "$LAB_WORK/c2" -mindepth 1 -delete  # hidden partials too (a failed run)
  get 1 "$LAB_WORK/pair1.json" & a=$!
  get 2 "$LAB_WORK/pair2.json" & b=$!
  wait "$a" "$b"
  lines+=("round $round, two pxfer: $(share pair "$LAB_WORK/pair1.json" "$LAB_WORK/pair2.json")")
  lab_log "${lines[-1]}"
  find "$LAB_WORK/c1" -mindepth 1 -delete
  # -R: the server (in b, beside pxferd) sends, so its flow and the get's data cross the same
  # direction of the link. Without it (before 2026-11-29) iperf3 sent a -> b and never shared the
  # get's bottleneck: the "share" then was each direction's own rate.
  ip netns exec "$LAB_NAME-a" iperf3 -c "$LAB_B" -R -P 1 -t 600 -J >"$LAB_WORK/iperf3.json" 2>&1 & i=$!
  sleep 2
  get 1 "$LAB_WORK/beside.json"
  kill -INT "$i" 2>/dev/null; wait "$i"
  lines+=("round $round, pxfer beside iperf3: $(share iperf3 "$LAB_WORK/iperf3.json" "$LAB_WORK/beside.json" 2)")
  lab_log "${lines[-1]}"
done
{
  echo "# Sharing a link: untuned pxfer against itself and iperf3 -P 1 ($(date -u '+%Y-%m-%d %H:%M UTC'))"
  echo
  echo "- command: \`bench/wan_fairness.sh --rtt $RTT --loss $LOSS --cc $CC --rate $RATE --size $SIZE --rounds $ROUNDS\`"
  echo "- pxfer: git $(git -C "$here" rev-parse --short HEAD 2>/dev/null); machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg) at the end"
  echo
  for l in "${lines[@]}"; do echo "- $l"; done
} >"$OUT"
echo "bench/wan_fairness.sh: wrote $OUT" >&2
