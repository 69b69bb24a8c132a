#!/usr/bin/env bash
# Reliability soak (issue 5): for MINUTES, moves files through a fault-injecting proxy while
# random faults hit the transfers, and checks every file that arrived against its source.
#   bench/soak.sh [MINUTES] [SEED]
# Faults, about one a second while a transfer runs: reset one of the newest connections, stall
# one, stall every connection, reset every connection, SIGKILL pxferd (restarted at once, same port behind the proxy), SIGKILL
# the client (the same command is run again). Every transfer uses --retries 6 --stall-timeout 2s,
# so it resumes from what the receiver kept.
# Report: transfers completed and failed, faults injected, retries, resumed bytes, stream
# recoveries, and corrupt files (a file under its final name that differs from its source: must
# be 0) and lost files (a transfer that reported success without the file: must be 0), and the
# temporary files (.NAME.pxfer-*) still in the export or the client's directory once
# --partial-max-age (5 s here, both ends) has passed after the last transfer: must be 0 (issue 16).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
minutes="${1:-10}"
seed="${2:-$RANDOM}"
RANDOM=$seed
build_dir="${PXFER_BUILD_DIR:-$here/build}"
"$here/tools/build.sh" "$build_dir" Release pxfer-cli pxferd pxfer-fault-proxy >/dev/null
bin="$build_dir/bin"
work="$(mktemp -d "${TMPDIR:-/tmp}/pxfer-soak.XXXXXX")"
spid=""; ppid_=""
cleanup() {
  [ -n "$spid" ] && kill -9 "$spid" 2>/dev/null || true
  exec {pin}>&- 2>/dev/null || true
  [ -n "$ppid_" ] && kill "$ppid_" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
mkdir -p "$work/root" "$work/local" "$work/src"
export PXFER_KNOWN_HOSTS="$work/known_hosts"

# shellcheck source=bench/lab/lib.sh
source "$here/bench/lab/lib.sh"
start_server() {
  lab_loopback_server "$bin" "$work" --partial-max-age 5s
  spid=$LAB_LOOPBACK_PID
}
start_server
mkfifo "$work/proxy.in"
"$bin/pxfer-fault-proxy" "$(cat "$work/port")" "$work/proxy.port" <"$work/proxy.in" >/dev/null & ppid_=$!
exec {pin}>"$work/proxy.in"
for _ in $(seq 200); do [ -s "$work/proxy.port" ] && break; sleep 0.02; done
url="pxfer://127.0.0.1:$(cat "$work/proxy.port")"
echo "rate 25000000" >&$pin  # 25 MB/s per connection: transfers last long enough to be hit

# Sources: a few sizes, random content.
sizes=(1 4 16 48 96)
for s in "${sizes[@]}"; do head -c "$((s * 1048576))" /dev/urandom >"$work/src/f$s.bin"; done
for s in "${sizes[@]}"; do cp "$work/src/f$s.bin" "$work/root/f$s.bin"; done

completed=0 failed=0 corrupt=0 lost=0 faults=0 retries=0 resumed=0 recoveries=0 kills_server=0 kills_client=0
declare -A fault_kinds=()
deadline=$(( $(date +%s) + minutes * 60 ))
i=0
summary_field() { python3 -c '
import json, sys
field = sys.argv[1]
value = 0
for line in open(sys.argv[2]):
    try:
        e = json.loads(line)
    except ValueError:
        continue
    if e.get("event") == "summary":
        value = e.get(field, 0)
print(value)' "$1" "$2"; }

inject() {
  local kind=$((RANDOM % 10))
  case $kind in
    0|1) echo "cut-recent $(( RANDOM % 4 ))" >&$pin; fault_kinds[cut_one]=$(( ${fault_kinds[cut_one]:-0} + 1 )) ;;
    2|3) echo "stall-recent $(( RANDOM % 4 ))" >&$pin; fault_kinds[stall_one]=$(( ${fault_kinds[stall_one]:-0} + 1 )) ;;
    4) echo "stall-all" >&$pin; fault_kinds[stall_all]=$(( ${fault_kinds[stall_all]:-0} + 1 )) ;;
    5|6) echo "cut-all" >&$pin; fault_kinds[cut_all]=$(( ${fault_kinds[cut_all]:-0} + 1 )) ;;
    7|8)
      kill -9 "$spid" 2>/dev/null || true; wait "$spid" 2>/dev/null || true
      start_server; echo "upstream $(cat "$work/port")" >&$pin
      kills_server=$((kills_server + 1)); fault_kinds[kill_server]=$(( ${fault_kinds[kill_server]:-0} + 1 )) ;;
    9) return 1 ;;  # the caller kills the client
  esac
  faults=$((faults + 1))
  return 0
}

while [ "$(date +%s)" -lt "$deadline" ]; do
  i=$((i + 1))
  s=${sizes[$((RANDOM % ${#sizes[@]}))]}
  if (( RANDOM % 2 )); then
    dir=put; src="$work/src/f$s.bin"; dest="$work/root/out$i.bin"
    cmd=("$bin/pxfer" put "$src" "$url/out$i.bin")
  else
    dir=get; src="$work/root/f$s.bin"; dest="$work/local/out$i.bin"
    cmd=("$bin/pxfer" get "$url/f$s.bin" "$dest" --partial-max-age 5s)
  fi
  cmd+=(-p 4 --retries 6 --stall-timeout 2s --json)
  attempt_runs=0
  while :; do
    attempt_runs=$((attempt_runs + 1))
    "${cmd[@]}" >"$work/out.json" 2>"$work/err.txt" & cpid=$!
    killed_client=0
    # Faults while it runs (the proxy's stall-all is lifted by the cut that the stall timeout causes).
    while kill -0 "$cpid" 2>/dev/null; do
      sleep "0.$((RANDOM % 9 + 1))"
      (( RANDOM % 3 == 0 )) || continue
      kill -0 "$cpid" 2>/dev/null || break
      if ! inject; then
        kill -9 "$cpid" 2>/dev/null || true
        killed_client=1; kills_client=$((kills_client + 1)); faults=$((faults + 1))
        fault_kinds[kill_client]=$(( ${fault_kinds[kill_client]:-0} + 1 ))
        break
      fi
    done
    set +e; wait "$cpid"; status=$?; set -e
    retries=$((retries + $(grep -c '"event":"retry"' "$work/out.json" || true)))
    # A stall-all left in force would starve the rerun: cut what is stalled.
    echo "cut-all" >&$pin
    if [ "$killed_client" = 1 ] && [ "$attempt_runs" -lt 4 ]; then continue; fi
    break
  done
  if [ "$status" = 0 ]; then
    if [ ! -f "$dest" ]; then lost=$((lost + 1)); echo "LOST: $dir $dest" >&2
    elif ! cmp -s "$src" "$dest"; then corrupt=$((corrupt + 1)); echo "CORRUPT: $dir $dest" >&2
    else completed=$((completed + 1)); fi
    resumed=$((resumed + $(summary_field resumed_bytes "$work/out.json")))
    recoveries=$((recoveries + $(summary_field stream_recoveries "$work/out.json")))
  else
    failed=$((failed + 1))
    echo "failed ($status): $dir of ${s} MiB: $(tail -1 "$work/err.txt")" >&2
    # Whatever failed, nothing may sit under the final name unless it is whole.
    if [ -f "$dest" ] && ! cmp -s "$src" "$dest"; then corrupt=$((corrupt + 1)); echo "CORRUPT after failure: $dest" >&2; fi
  fi
  rm -f "$dest"
done

# Leftovers: pxferd sweeps its tree every 2.5 s (half of --partial-max-age); a get sweeps its
# directory when it starts, so one last get does the client's side.
sleep 8
"$bin/pxfer" get "$url/f1.bin" "$work/local/last.bin" --partial-max-age 5s >/dev/null 2>&1 || true
leftovers=$(find "$work/root" "$work/local" -name '.*.pxfer-*' | wc -l)
[ "$leftovers" = 0 ] || find "$work/root" "$work/local" -name '.*.pxfer-*' >&2

kinds=""; for k in "${!fault_kinds[@]}"; do kinds+="$k=${fault_kinds[$k]} "; done
cat <<EOF
soak: $minutes min, seed $seed, 4 streams, --retries 6 --stall-timeout 2s, 25 MB/s per connection
transfers completed: $completed
transfers failed:    $failed
faults injected:     $faults ($kinds)
retries:             $retries
resumed bytes:       $resumed
stream recoveries:   $recoveries
corrupt files:       $corrupt
lost files:          $lost
temporaries left:    $leftovers
EOF
[ "$corrupt" = 0 ] && [ "$lost" = 0 ] && [ "$leftovers" = 0 ]
