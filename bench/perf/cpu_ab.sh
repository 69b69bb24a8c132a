#!/usr/bin/env bash
# bench/perf/cpu_ab.sh ROUNDS SIZE BIN_DIR... : CPU seconds (client + server) of a 4-stream put
# and get of SIZE per build, rounds interleaved, each build's pxfer against its own pxferd, files
# in /dev/shm. CPU time moves less with the machine's load than MB/s do (docs/performance.md,
# section 6); a BIN_DIR may hold wrapper scripts that set an environment for pxfer and pxferd.
set -euo pipefail
rounds="$1"; size="$2"; shift 2; bins=("$@")
w=$(mktemp -d /dev/shm/lg-cpu.XXXXXX); pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true; rm -rf "$w"' EXIT
head -c "$size" /dev/urandom > "$w/big.bin"
export PXFER_KNOWN_HOSTS="$w/kh"
hz=$(getconf CLK_TCK)
declare -A spid url res
for i in "${!bins[@]}"; do
  mkdir -p "$w/$i/root" "$w/$i/client"; cp "$w/big.bin" "$w/$i/root/src.bin"
  "${bins[$i]}/pxferd" --root "$w/$i/root" --listen 127.0.0.1:0 --insecure-no-auth --state-dir "$w/$i/st" --port-file "$w/$i/port" 2>/dev/null & spid[$i]=$!; pids+=($!)
  for _ in $(seq 100); do [ -s "$w/$i/port" ] && break; sleep 0.05; done
  url[$i]="pxfer://127.0.0.1:$(cat $w/$i/port)"
done
sc() { awk '{print $14+$15}' /proc/$1/stat; }
for r in $(seq "$rounds"); do
  for i in "${!bins[@]}"; do
    b="${bins[$i]}"; u="${url[$i]}"
    for op in put get; do
      rm -f "$w/$i/root/dst.bin" "$w/$i/client/out.bin"
      if [ $op = put ]; then cmd=("$b/pxfer" put -p 4 "$w/big.bin" "$u/dst.bin"); else cmd=("$b/pxfer" get -p 4 "$u/src.bin" "$w/$i/client/out.bin"); fi
      s0=$(sc ${spid[$i]})
      rate=$(/usr/bin/time -f "%U %S %e" -o "$w/t" "${cmd[@]}" | sed -n 's/.* bytes in \([0-9.]*\) s, \([0-9.]*\) MB\/s.*/\2/p' | tail -1)
      s1=$(sc ${spid[$i]})
      read cu cs e < "$w/t"
      tot=$(echo "$cu + $cs + ($s1 - $s0) / $hz" | bc -l)
      printf "r%d %-22s %s cpu %.2f (client %.2f server %.2f) wall %.2f rate %s\n" $r "$b" $op $tot $(echo "$cu+$cs" | bc) $(echo "($s1-$s0)/$hz" | bc -l) $e "$rate"
      res[$i,$op]+="$tot "
    done
  done
done
median() { tr ' ' '\n' | grep -v '^$' | sort -n | awk '{v[NR]=$1} END {print (NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }
for i in "${!bins[@]}"; do printf "%-24s put cpu %.2f  get cpu %.2f (median CPU s, client+server)\n" "${bins[$i]}" $(echo "${res[$i,put]}" | median) $(echo "${res[$i,get]}" | median); done
echo "load $(cut -d' ' -f1-3 /proc/loadavg)"
