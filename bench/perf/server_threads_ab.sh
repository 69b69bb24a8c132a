#!/usr/bin/env bash
# pxferd --threads 1 vs 2 (client default), 1 GiB put and get -p 4, interleaved.
set -euo pipefail
bin="${PXFER_BIN_DIR:-$(cd "$(dirname "$0")/../.." && pwd)/build/bin}"; W=$(mktemp -d /dev/shm/speed-th.XXXX); pids=()
trap 'kill "${pids[@]}" 2>/dev/null; rm -rf $W' EXIT
head -c 1G /dev/urandom > $W/src.bin; export PXFER_KNOWN_HOSTS=$W/kh
declare -A url
for t in 1 2; do mkdir -p $W/r$t $W/c$t; cp $W/src.bin $W/r$t/big.bin
  $bin/pxferd --threads $t --root $W/r$t --listen 127.0.0.1:0 --insecure-no-auth --state-dir $W/s$t --port-file $W/p$t 2>/dev/null & pids+=($!)
  for _ in $(seq 100); do [ -s $W/p$t ] && break; sleep 0.05; done; url[$t]=pxfer://127.0.0.1:$(cat $W/p$t); done
rate() { sed -n 's/.* bytes in \([0-9.]*\) s, \([0-9.]*\) MB\/s.*/\2/p'; }
for r in $(seq ${1:-4}); do for t in 1 2; do
  rm -f $W/r$t/put.bin $W/c$t/get.bin
  p=$($bin/pxfer put -p 4 $W/src.bin ${url[$t]}/put.bin 2>/dev/null | rate)
  g=$($bin/pxfer get -p 4 ${url[$t]}/big.bin $W/c$t/get.bin 2>/dev/null | rate)
  echo "round $r pxferd --threads $t: put $p get $g MB/s (load $(cut -d' ' -f1 /proc/loadavg))"
done; done
