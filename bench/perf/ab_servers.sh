# Sourced by bench/perf/small_ab.sh and cpu_ab_turned.sh: one pxferd per build ($a_bin, $b_bin),
# each on loopback without authentication with its own root below $work; sets url[a|b],
# spid[a|b] and pids, and defines ticks PID (the process's CPU ticks from /proc).
export PXFER_KNOWN_HOSTS="$work/known_hosts"
declare -A url spid
for side in a b; do
  bin_var="${side}_bin"; bin="${!bin_var}"
  mkdir -p "$work/$side/root" "$work/$side/client"
  "$bin/pxferd" --root "$work/$side/root" --listen 127.0.0.1:0 --insecure-no-auth --state-dir "$work/$side/state" --port-file "$work/$side/port" 2>/dev/null & pids+=($!); spid[$side]=$!
  for _ in $(seq 100); do [ -s "$work/$side/port" ] && break; sleep 0.05; done
  url[$side]="pxfer://127.0.0.1:$(cat "$work/$side/port")"
done
ticks() { awk '{print $14+$15}' "/proc/$1/stat"; }
