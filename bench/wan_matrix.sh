#!/bin/bash
# bench/wan_matrix.sh: pxfer against GridFTP and XRootD through the emulated WAN (pxfer-wanem,
# docs/wanem.md), cell by cell: RTT x loss x congestion control, tools interleaved round by round.
#
# usage: bench/wan_matrix.sh [options]       (root: it builds namespaces and TUN devices)
#   --rtt "2 20 50 150"          round-trip times in ms (half each way)
#   --loss "0 0.001 0.01 0.1"    random loss in percent, each way
#   --cc "reno bbr"              namespace default congestion control (every tool uses it)
#   --rate 1gbit                 the emulated bottleneck
#   --size 1G                    the file (random bytes), truncate(1) sizes
#   --rounds 1                   rounds per cell; each round runs every tool once, in order
#   --tools "pxfer-get pxfer-put p1 p2 p4 p8 p16 p32 p64 gridftp gridftp-bdp xrdcp"
#       pxfer-get / pxfer-put  untuned pxfer (-p auto, kernel buffers)
#       pN                     pxfer get -p N
#       gridftp                globus-url-copy -fast (its default: one stream)
#       gridftp-bdp            globus-url-copy -fast -p 8 -tcp-bs BDP (what a careful admin sets)
#       xrdcp                  xrdcp with its defaults
#       iperf3                 iperf3 -R -P 32 -n SIZE: memory to memory, no file, no checksum; not a
#                              peer but the path's own reach (what TCP through the emulator carries)
#   --limit 300                seconds before a run is cut (recorded as "cut")
#   --out FILE                 markdown results (default bench/results/wan-matrix-run.md)
#   --bin DIR                  pxfer, pxferd and pxfer-wanem from DIR (default build/bin)
#   --keep DIR                 keep each pxfer run's output there (rate lines each second, auto's
#                              steps): how the rate moved over the file, not only its mean
# The full matrix (4 x 4 x 2 cells x 12 tools x 1 GiB) takes hours; choose cells and tools.
# Example (the subset in bench/results/wan-matrix.md):
#   bench/wan_matrix.sh --rtt 50 --loss 0.01 --cc reno --size 256M --rounds 2 \
#       --tools "pxfer-get p8 p32 gridftp-bdp"
# Every packet stays inside the two namespaces this script creates (10.77.0.1 <-> 10.77.0.2).
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
usage() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "${BASH_SOURCE[0]}"; }

RTTS="2 20 50 150" LOSSES="0 0.001 0.01 0.1" CCS="reno bbr" RATE=1gbit SIZE=1G ROUNDS=1 LIMIT=300
TOOLS="pxfer-get pxfer-put p1 p2 p4 p8 p16 p32 p64 gridftp gridftp-bdp xrdcp"
OUT=$here/bench/results/wan-matrix-run.md
BIN=$here/build/bin KEEP=
while [[ $# -gt 0 ]]; do
  case $1 in
    --rtt) RTTS=$2 ;; --loss) LOSSES=$2 ;; --cc) CCS=$2 ;; --rate) RATE=$2 ;; --size) SIZE=$2 ;;
    --rounds) ROUNDS=$2 ;; --tools) TOOLS=$2 ;; --limit) LIMIT=$2 ;; --out) OUT=$2 ;; --bin) BIN=$2 ;; --keep) KEEP=$2 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "bench/wan_matrix.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
  shift 2 || { echo "bench/wan_matrix.sh: $1 needs a value" >&2; exit 2; }
done
[[ $(id -u) -eq 0 && -c /dev/net/tun ]] || { echo "bench/wan_matrix.sh: needs root and /dev/net/tun" >&2; exit 1; }
for f in pxfer pxferd; do
  [[ -x $BIN/$f ]] || { echo "bench/wan_matrix.sh: no $BIN/$f; build it or pass --bin DIR" >&2; exit 1; }
done
WANEM_BIN=$BIN/pxfer-wanem
[[ -x $WANEM_BIN ]] || WANEM_BIN=$BIN/../wanem/pxfer-wanem
[[ -x $WANEM_BIN ]] || { echo "bench/wan_matrix.sh: no pxfer-wanem beside $BIN (ninja pxfer-wanem)" >&2; exit 1; }

# shellcheck source=lab/lib.sh
source "$here/bench/lab/lib.sh"
user=pxbench
id "$user" >/dev/null 2>&1 || useradd --system --shell /bin/sh --home-dir /nonexistent --no-create-home "$user"
LAB_NAME="pxwm$$"
LAB_WORK=$(mktemp -d /dev/shm/pxwan.XXXXXX)
mkdir -p "$LAB_WORK/bin" "$LAB_WORK/srv/put" "$LAB_WORK/cli" "$LAB_WORK/peer"
cp "$BIN/pxfer" "$BIN/pxferd" "$WANEM_BIN" "$LAB_WORK/bin/"
LAB_WANEM=$LAB_WORK/bin/pxfer-wanem LAB_PXFER=$LAB_WORK/bin/pxfer LAB_PXFERD=$LAB_WORK/bin/pxferd
cleanup() {
  stop_peers
  lab_cleanup
  "$LAB_WANEM" down --name "$LAB_NAME" >/dev/null 2>&1
  rm -rf "$LAB_WORK" "/etc/netns/$LAB_NAME-a" "/etc/netns/$LAB_NAME-b"
}
trap cleanup EXIT
trap 'exit 143' INT TERM
lab_lock /tmp/pxfer-lab.lock 600 || { echo "bench/wan_matrix.sh: the lab is busy" >&2; exit 1; }
# GridFTP resolves its own host name: a hosts file in each namespace (ip netns exec mounts it).
for side in a b; do
  mkdir -p "/etc/netns/$LAB_NAME-$side"
  printf '127.0.0.1 localhost %s\n%s wan-a\n%s wan-b\n' "$(hostname)" "$LAB_A" "$LAB_B" >"/etc/netns/$LAB_NAME-$side/hosts"
done
head -c "$(numfmt --from=iec "${SIZE%B}")" /dev/urandom >"$LAB_WORK/srv/src.bin"
chown -R "$user:" "$LAB_WORK/srv" "$LAB_WORK/cli" "$LAB_WORK/peer"
chmod 0755 "$LAB_WORK"
bytes=$(stat -c %s "$LAB_WORK/srv/src.bin")

GRIDFTP_PORT=2811 XROOTD_PORT=1094 IPERF3_PORT=5201
as_user() { ip netns exec "$LAB_NAME-$1" setpriv --reuid "$user" --regid "$user" --clear-groups -- "${@:2}"; }
user_a=(ip netns exec "$LAB_NAME-a" setpriv --reuid "$user" --regid "$user" --clear-groups --)
start_peers() {
  if [[ " $TOOLS " == *" gridftp"* ]]; then
    # 9>&-: the lab lock's descriptor stays out of the daemons (a gridftp session child that
    # outlived its server held the lock for the next run).
    as_user b globus-gridftp-server -control-interface "$LAB_B" -data-interface "$LAB_B" -p "$GRIDFTP_PORT" -aa \
      -anonymous-names-allowed '*' -S -pidfile "$LAB_WORK/peer/gridftp.pid" -l "$LAB_WORK/peer/gridftp.log" 9>&- || return 1
  fi
  if [[ " $TOOLS " == *" xrdcp "* ]]; then
    printf 'all.export %s\nxrd.port %s\nxrd.network nodnr\n' "$LAB_WORK/srv" "$XROOTD_PORT" >"$LAB_WORK/peer/xrootd.cfg"
    as_user b xrootd -b -c "$LAB_WORK/peer/xrootd.cfg" -l "$LAB_WORK/peer/xrootd.log" -s "$LAB_WORK/peer/xrootd.pid" -n pxwan 9>&- || return 1
  fi
  if [[ " $TOOLS " == *" iperf3 "* ]]; then
    as_user b iperf3 -s -B "$LAB_B" -p "$IPERF3_PORT" -D -I "$LAB_WORK/peer/iperf3.pid" 9>&- || return 1
  fi
  sleep 1
}
stop_peers() {
  local f
  for f in "$LAB_WORK/peer/gridftp.pid" "$LAB_WORK/peer/xrootd.pid" "$LAB_WORK/peer/iperf3.pid"; do
    [[ -s $f ]] && kill "$(cat "$f")" 2>/dev/null
    rm -f "$f"
  done
}

# bdp_bytes RTT_MS: the link's bandwidth-delay product.
bdp_bytes() { awk -v r="$(numfmt --from=si "$(tr a-z A-Z <<<"${RATE%bit}")")" -v t="$1" 'BEGIN { printf "%d", r / 8 * t / 1000 }'; }

# run_tool TOOL RTT: one transfer; prints "seconds" or "cut"/"failed".
run_tool() {
  local tool=$1 rtt=$2 url start rc=0 cmd quiet=-q
  [[ -n $KEEP ]] && quiet=--stream-stats
  # Hidden files too: a run cut at --limit leaves its partial file and journal there, and the next
  # pxfer run would resume it (a -p 32 after a cut -p 8 "moved" 1 GiB in 2.1 s).
  find "$LAB_WORK/cli" "$LAB_WORK/srv/put" -mindepth 1 -delete
  url=$(lab_url src.bin)
  case $tool in
    pxfer-get) cmd=(ip netns exec "$LAB_NAME-a" "$LAB_PXFER" get --stream-stats "$url" "$LAB_WORK/cli/") ;;
    pxfer-put) cmd=(ip netns exec "$LAB_NAME-a" "$LAB_PXFER" put --stream-stats "$LAB_WORK/srv/src.bin" "$(lab_url put/)") ;;
    p[0-9]*) cmd=(ip netns exec "$LAB_NAME-a" "$LAB_PXFER" get "$quiet" -p "${tool#p}" "$url" "$LAB_WORK/cli/") ;;
    gridftp) cmd=("${user_a[@]}" globus-url-copy -fast "ftp://$LAB_B:$GRIDFTP_PORT$LAB_WORK/srv/src.bin" "file://$LAB_WORK/cli/src.bin") ;;
    gridftp-bdp) cmd=("${user_a[@]}" globus-url-copy -fast -p 8 -tcp-bs "$(bdp_bytes "$rtt")"
                      "ftp://$LAB_B:$GRIDFTP_PORT$LAB_WORK/srv/src.bin" "file://$LAB_WORK/cli/src.bin") ;;
    xrdcp) cmd=("${user_a[@]}" xrdcp -f -N "root://$LAB_B:$XROOTD_PORT/$LAB_WORK/srv/src.bin" "$LAB_WORK/cli/src.bin") ;;
    iperf3) cmd=("${user_a[@]}" iperf3 -c "$LAB_B" -p "$IPERF3_PORT" -R -P 32 -n "$bytes") ;;
    *) echo "unknown-tool"; return ;;
  esac
  start=$(date +%s.%N)
  lab_watch_begin
  timeout -k 5 "$LIMIT" "${cmd[@]}" >"$LAB_WORK/run.out" 2>&1 || rc=$?
  lab_watch_end "$LAB_WORK/run.watch"
  [[ -n $KEEP ]] && mkdir -p "$KEEP" && cp "$LAB_WORK/run.out" "$KEEP/rtt$rtt-$tool-$(date +%H%M%S).out"
  if [[ $rc -eq 124 ]]; then echo cut; return; fi
  if [[ $rc -ne 0 ]]; then lab_log "$tool failed ($rc): $(tail -2 "$LAB_WORK/run.out" | tr '\n' ' ')"; echo failed; return; fi
  # What -p auto chose and why, and each step it took (--stream-stats), for the log.
  grep -E '^streams: ([0-9]+ ->|auto )' "$LAB_WORK/run.out" | sed "s/^/    $tool /" >&2
  awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.2f", e - s }'
}

mbit() { [[ $1 =~ ^[0-9.]+$ ]] && awk -v b="$bytes" -v s="$1" 'BEGIN { printf "%.0f", b * 8 / s / 1e6 }' || echo "$1"; }
median() { tr ' ' '\n' | awk '$1 ~ /^[0-9.]+$/' | sort -g | awk '{ v[NR] = $1 } END {
  if (NR == 0) print "-"; else if (NR % 2) print v[(NR + 1) / 2]; else printf "%.0f", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

mkdir -p "$(dirname "$OUT")"
{
  echo "# WAN matrix: $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo
  echo "- command: \`bench/wan_matrix.sh --rtt \"$RTTS\" --loss \"$LOSSES\" --cc \"$CCS\" --rate $RATE --size $SIZE --rounds $ROUNDS --limit $LIMIT --tools \"$TOOLS\"\`"
  echo "- pxfer: git $(git -C "$here" rev-parse --short HEAD 2>/dev/null)$(git -C "$here" diff --quiet 2>/dev/null || echo '+changes'); machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg) at the start"
  echo "- kernel buffers, untouched (read in the root namespace; a new namespace may start from the kernel defaults): tcp_rmem $(sysctl -n net.ipv4.tcp_rmem | tr '\t' ' '), tcp_wmem $(sysctl -n net.ipv4.tcp_wmem | tr '\t' ' ')"
  echo "- rates in Mbit/s = file bytes x 8 / wall-clock seconds of the client command (connection set-up included); median of the rounds"
  echo
} >"$OUT"
declare -A results
# watch_text: "busy 93 %, emulator 71 %, wan0 drops 0/0" from the last run's lab_watch_end.
watch_text() { awk '{ printf "machine busy %s %%, emulator %s %% of a core, wan0 drops %s/%s", $1, $2, $3, $4 }' "$LAB_WORK/run.watch"; }
for cc in $CCS; do
  for rtt in $RTTS; do
    for loss in $LOSSES; do
      half=$(awk -v r="$rtt" 'BEGIN { print r / 2 }')
      lab_link_up --delay "$half" --loss "$loss%" --rate "$RATE" --seed 1 || exit 1
      lab_sysctl_both net.ipv4.tcp_congestion_control="$cc" net.ipv4.tcp_no_metrics_save=1 || exit 1
      lab_server_start || exit 1
      start_peers || { echo "bench/wan_matrix.sh: a peer server did not start" >&2; exit 1; }
      cell="RTT $rtt ms, loss $loss %, $cc"
      lab_log "$cell"
      runs=""
      for round in $(seq "$ROUNDS"); do
        for tool in $TOOLS; do
          s=$(run_tool "$tool" "$rtt")
          lab_log "  round $round $tool: $s s ($(mbit "$s") Mbit/s; $(watch_text))"
          results["$cell|$tool"]+="$(mbit "$s") "
          runs+="| $tool | $round | $(mbit "$s") | $(awk '{ print $1 " | " $2 " | " $3 "/" $4 }' "$LAB_WORK/run.watch") |"$'\n'
        done
      done
      stop_peers
      lab_cleanup
      {
        echo "## $cell"
        echo
        echo "| tool | Mbit/s (median) | rounds |"
        echo "|---|---:|---|"
        for tool in $TOOLS; do
          echo "| $tool | $(median <<<"${results["$cell|$tool"]}") | ${results["$cell|$tool"]}|"
        done
        echo
        # Whether the emulator kept up: wan0 drops are packets the kernel dropped before the
        # emulator read them, and an emulator near 100 % of its core cannot forward faster.
        echo "Each run: machine busy % of all cores, the emulator's CPU % of one core, wan0 drops a/b."
        echo "$(lab_counters)."
        echo
        echo "| tool | round | Mbit/s | machine busy % | emulator CPU % | wan0 drops a/b |"
        echo "|---|---:|---:|---:|---:|---|"
        printf '%s' "$runs"
        echo
      } >>"$OUT"
    done
  done
done
echo "bench/wan_matrix.sh: wrote $OUT" >&2
