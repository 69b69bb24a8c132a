# shellcheck shell=bash
# bench/lab/lib.sh: helpers shared by bench/experiments.sh, tests/lab/*.sh and the loopback
# harnesses (bench/*.sh, bench/perf/*.sh: lab_loopback_server only). Sourced, not run.
#
# An emulated link (pxfer-wanem, docs/wanem.md) joins namespaces NAME-a (10.77.0.1, the client)
# and NAME-b (10.77.0.2, pxferd). Every packet stays inside those two namespaces.
#
# The caller sets, before using anything here:
#   LAB_WANEM LAB_PXFER LAB_PXFERD   the three binaries
#   LAB_NAME                         link name (namespaces LAB_NAME-a, LAB_NAME-b)
#   LAB_WORK                         scratch directory (in /dev/shm), removed by the caller
# and calls lab_cleanup from its EXIT trap.

LAB_SUBNET=10.77.0
LAB_A=$LAB_SUBNET.1
LAB_B=$LAB_SUBNET.2
LAB_WANEM_PID=""
LAB_SERVER_PID=""
LAB_PORT=""

lab_log() { echo "[$(date +%H:%M:%S)] $*" >&2; }

# lab_find_wanem BUILD_DIR: path of pxfer-wanem (build/bin or build/wanem), empty if none.
lab_find_wanem() {
  local f
  for f in "$1/bin/pxfer-wanem" "$1/wanem/pxfer-wanem"; do
    [[ -x $f ]] && { echo "$f"; return 0; }
  done
  return 1
}

# lab_can_run: true when this process may build namespaces and TUN devices.
lab_can_run() { [[ $(id -u) -eq 0 && -c /dev/net/tun ]] && command -v ip >/dev/null; }

# lab_lock FILE SECONDS: serialise lab users (experiments, the ctest) on this machine: two
# emulated links at once would share the CPU and spoil both measurements. Uses fd 9.
lab_lock() {
  exec 9>"$1"
  if ! flock -n 9; then
    lab_log "another lab run holds $1; waiting up to $2 s"
    flock -w "$2" 9 || return 1
  fi
}

# lab_link_up ARGS...: `pxfer-wanem up` with ARGS in the background; waits for its ready file.
lab_link_up() {
  rm -f "$LAB_WORK/ready"
  "$LAB_WANEM" up --name "$LAB_NAME" --ready-file "$LAB_WORK/ready" \
    --counters-file "$LAB_WORK/counters.json" "$@" >"$LAB_WORK/wanem.out" 2>"$LAB_WORK/wanem.err" &
  LAB_WANEM_PID=$!
  local i
  for i in $(seq 200); do
    [[ -f $LAB_WORK/ready ]] && return 0
    kill -0 "$LAB_WANEM_PID" 2>/dev/null || break
    sleep 0.05
  done
  echo "pxfer-wanem up $* did not come up:" >&2
  cat "$LAB_WORK/wanem.out" "$LAB_WORK/wanem.err" >&2
  return 1
}

# lab_link_down: SIGTERM to the emulator (it deletes both namespaces), then wait for it.
lab_link_down() {
  [[ -n $LAB_WANEM_PID ]] || return 0
  kill -TERM "$LAB_WANEM_PID" 2>/dev/null || true
  wait "$LAB_WANEM_PID" 2>/dev/null || true
  LAB_WANEM_PID=""
}

# lab_counters: one line from the emulator's counters file (after lab_link_down).
lab_counters() {
  python3 - "$LAB_WORK/counters.json" <<'EOF' 2>/dev/null || echo "(no counters)"
import json, sys
c = json.load(open(sys.argv[1]))
def d(k):
    x = c[k]
    return "%d pkts forwarded, %d lost, %d queue-dropped" % (
        x["forwarded_packets"], x["lost_packets"], x["queue_dropped_packets"])
print("emulator counters (seed %s, %.0f s): a->b %s; b->a %s" % (c["seed"], c["duration_seconds"], d("a_to_b"), d("b_to_a")))
EOF
}

# lab_sysctl NS KEY=VALUE...: sets sysctls inside one namespace (quietly; fails loudly).
lab_sysctl() {
  local ns=$1; shift
  ip netns exec "$ns" sysctl -qw "$@" >/dev/null
}

# lab_sysctl_both KEY=VALUE...: the same in both namespaces.
lab_sysctl_both() { lab_sysctl "$LAB_NAME-a" "$@" && lab_sysctl "$LAB_NAME-b" "$@"; }

# lab_loopback_server BIN_DIR DIR [PXFERD_ARGS...]: BIN_DIR/pxferd on a free 127.0.0.1 port
# without authentication (the loopback harnesses measure transfers, not logins), export root
# DIR/root, state DIR/state, log DIR/pxferd.log; waits for its port. Sets LAB_LOOPBACK_PID and
# LAB_LOOPBACK_URL (pxfer://127.0.0.1:PORT); the caller stops it by that PID. Needs none of the
# LAB_* variables above, and no root.
lab_loopback_server() {
  local bin=$1 dir=$2 i
  shift 2
  mkdir -p "$dir/root"
  rm -f "$dir/port"
  "$bin/pxferd" --root "$dir/root" --listen 127.0.0.1:0 --insecure-no-auth --state-dir "$dir/state" \
    --port-file "$dir/port" "$@" 2>>"$dir/pxferd.log" &
  LAB_LOOPBACK_PID=$!
  for i in $(seq 100); do
    if [[ -s $dir/port ]]; then
      LAB_LOOPBACK_URL="pxfer://127.0.0.1:$(cat "$dir/port")"
      return 0
    fi
    kill -0 "$LAB_LOOPBACK_PID" 2>/dev/null || break
    sleep 0.05
  done
  echo "$bin/pxferd did not start on loopback:" >&2
  cat "$dir/pxferd.log" >&2
  return 1
}

# lab_server_start [PXFERD_ARGS...]: pxferd inside NAME-b on 10.77.0.2 (any free port), export
# root LAB_WORK/srv, with any further pxferd options given (e.g. --max-active 10).
# Credentials (docs/security.md): a token for identity "lab" (PXFER_TOKEN) and the server's
# self-signed certificate pinned in LAB_WORK/known_hosts (PXFER_KNOWN_HOSTS), both exported so
# every pxfer started afterwards (inside the namespace too) authenticates without a warning.
lab_server_start() {
  mkdir -p "$LAB_WORK/srv"
  rm -f "$LAB_WORK/port"
  if [[ ! -s $LAB_WORK/token ]]; then
    (umask 077 && "$LAB_PXFERD" token create lab --tokens "$LAB_WORK/tokens" >"$LAB_WORK/token" 2>/dev/null)
  fi
  PXFER_TOKEN=$(cat "$LAB_WORK/token")
  PXFER_KNOWN_HOSTS=$LAB_WORK/known_hosts
  export PXFER_TOKEN PXFER_KNOWN_HOSTS
  ip netns exec "$LAB_NAME-b" "$LAB_PXFERD" --root "$LAB_WORK/srv" --listen "$LAB_B:0" \
    --tokens "$LAB_WORK/tokens" --state-dir "$LAB_WORK/state" \
    --port-file "$LAB_WORK/port" "$@" 2>>"$LAB_WORK/pxferd.log" &
  LAB_SERVER_PID=$!
  local i
  for i in $(seq 100); do
    if [[ -s $LAB_WORK/port ]]; then
      LAB_PORT=$(cat "$LAB_WORK/port")
      echo "$LAB_B:$LAB_PORT $("$LAB_PXFERD" fingerprint --state-dir "$LAB_WORK/state")" >>"$PXFER_KNOWN_HOSTS"
      return 0
    fi
    kill -0 "$LAB_SERVER_PID" 2>/dev/null || break
    sleep 0.05
  done
  echo "pxferd did not start in $LAB_NAME-b:" >&2
  cat "$LAB_WORK/pxferd.log" >&2
  return 1
}

lab_server_stop() {
  [[ -n $LAB_SERVER_PID ]] || return 0
  kill -TERM "$LAB_SERVER_PID" 2>/dev/null || true
  wait "$LAB_SERVER_PID" 2>/dev/null || true
  LAB_SERVER_PID=""
}

# lab_url PATH: the pxfer URL of PATH below the server's export root.
lab_url() { echo "pxfer://$LAB_B:$LAB_PORT/$1"; }

lab_cleanup() {
  lab_server_stop
  lab_link_down
}

# CPU accounting around one run: whole machine (100 = every core busy) and the emulator
# process (100 = one core).
_lab_cpu_now() {
  local w=0
  [[ -n $LAB_WANEM_PID && -r /proc/$LAB_WANEM_PID/stat ]] &&
    w=$(awk '{ sub(/^.*\) /, ""); print $12 + $13 }' "/proc/$LAB_WANEM_PID/stat")
  awk -v w="$w" '/^cpu / { t = 0; for (i = 2; i <= NF; i++) t += $i; print t, $5 + $6, w }' /proc/stat
}

# _lab_tx_drops NS: packets the sending kernel dropped on wan0 before the emulator read them
# (qdisc drops + TUN ring overflow, both only when the emulator falls behind). The emulator's own
# counters cannot see these.
_lab_tx_drops() {
  local q l
  q=$(ip netns exec "$1" tc -s qdisc show dev wan0 2>/dev/null | awk '/dropped/ { for (i = 1; i < NF; i++) if ($i == "(dropped") { gsub(/,/, "", $(i + 1)); n += $(i + 1) } } END { print n + 0 }')
  l=$(ip netns exec "$1" ip -s link show dev wan0 2>/dev/null | awk '/TX:/ { getline; print $4 + 0; exit }')
  echo $((${q:-0} + ${l:-0}))
}

# lab_watch_begin / lab_watch_end OUT: the machine around one run of any tool. lab_watch_end writes
# "machine_busy_pct emulator_cpu_pct wan0_drops_a wan0_drops_b" to OUT: a run with wan0 drops or an
# emulator near 100 % of its core was held back by the emulator, not by the path it emulates.
lab_watch_begin() {
  _LAB_WATCH_DA=$(_lab_tx_drops "$LAB_NAME-a"); _LAB_WATCH_DB=$(_lab_tx_drops "$LAB_NAME-b")
  _LAB_WATCH_CPU=$(_lab_cpu_now)
}
lab_watch_end() {
  local after
  after=$(_lab_cpu_now)
  awk -v b="$_LAB_WATCH_CPU" -v a="$after" -v hz="$(getconf CLK_TCK)" -v n="$(nproc)" 'BEGIN {
    split(b, x, " "); split(a, y, " "); dt = y[1] - x[1]
    if (dt <= 0) { printf "0 0"; exit }
    busy = 100 * (1 - (y[2] - x[2]) / dt)
    secs = dt / hz / n                  # /proc/stat counts ticks of all cores
    printf "%.0f %.0f", busy, (secs > 0 ? 100 * (y[3] - x[3]) / hz / secs : 0) }' >"$1"
  echo " $(($(_lab_tx_drops "$LAB_NAME-a") - _LAB_WATCH_DA)) $(($(_lab_tx_drops "$LAB_NAME-b") - _LAB_WATCH_DB))" >>"$1"
}

# lab_pxfer SECONDS OUT ARGS...: runs `pxfer ARGS --json` inside NAME-a, interrupted (SIGINT)
# after SECONDS if still running. NDJSON goes to OUT, stderr to OUT.err, and
# "machine_busy_pct emulator_cpu_pct wan0_drops_a wan0_drops_b" to OUT.cpu.
# Prints pxfer's exit status (124 = time limit).
lab_pxfer() {
  local limit=$1 out=$2; shift 2
  local rc=0
  lab_watch_begin
  ip netns exec "$LAB_NAME-a" timeout -s INT -k 5 "$limit" "$LAB_PXFER" "$@" --json >"$out" 2>"$out.err" || rc=$?
  lab_watch_end "$out.cpu"
  echo "$rc"
}

# lab_summary OUT [WARMUP]: one line from a run's NDJSON (see ndjson_summary.py).
lab_summary() { python3 "$(dirname "${BASH_SOURCE[0]}")/ndjson_summary.py" "$@"; }
