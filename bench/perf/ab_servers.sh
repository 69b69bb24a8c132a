# Sourced by bench/perf/small_ab.sh and cpu_ab_turned.sh: one pxferd per build ($a_bin, $b_bin),
# each on loopback without authentication with its own root below $work (bench/lab/lib.sh's
# lab_loopback_server); sets url[a|b], spid[a|b] and pids, and defines ticks PID (the process's
# CPU ticks from /proc).
# shellcheck source=bench/lab/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lab/lib.sh"
export PXFER_KNOWN_HOSTS="$work/known_hosts"
declare -A url spid
for side in a b; do
  bin_var="${side}_bin"; bin="${!bin_var}"
  mkdir -p "$work/$side/client"
  lab_loopback_server "$bin" "$work/$side"
  pids+=("$LAB_LOOPBACK_PID"); spid[$side]=$LAB_LOOPBACK_PID; url[$side]=$LAB_LOOPBACK_URL
done
ticks() { awk '{print $14+$15}' "/proc/$1/stat"; }
