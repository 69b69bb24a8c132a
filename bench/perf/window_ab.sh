#!/usr/bin/env bash
set -euo pipefail
# Default window (kernel autotuning) against a fixed -w 2M, 512 MiB put and get, P streams (P=1 ...).
bin="${PXFER_BIN_DIR:-$(cd "$(dirname "$0")/../.." && pwd)/build/bin}"; W=$(mktemp -d /dev/shm/speed-w.XXXX); spid=""
trap 'kill $spid 2>/dev/null; rm -rf $W' EXIT
mkdir -p $W/root $W/cli; head -c 512M /dev/urandom > $W/src.bin; cp $W/src.bin $W/root/big.bin
export PXFER_KNOWN_HOSTS=$W/kh
$bin/pxferd --root $W/root --listen 127.0.0.1:0 --insecure-no-auth --state-dir $W/st --port-file $W/port 2>/dev/null & spid=$!
for _ in $(seq 100); do [ -s $W/port ] && break; sleep 0.05; done; u=pxfer://127.0.0.1:$(cat $W/port)
rate() { sed -n 's/.* bytes in \([0-9.]*\) s, \([0-9.]*\) MB\/s.*/\2/p'; }
for r in 1 2 3; do for w in 0 2M; do
  rm -f $W/root/put.bin $W/cli/get.bin
  p=$($bin/pxfer put -p ${P:-4} -w $w $W/src.bin $u/put.bin 2>/dev/null | rate)
  g=$($bin/pxfer get -p ${P:-4} -w $w $u/big.bin $W/cli/get.bin 2>/dev/null | rate)
  echo "round $r -w $w: put $p get $g MB/s (load $(cut -d' ' -f1 /proc/loadavg))"
done; done
