#!/usr/bin/env bash
# Where a small file's time goes: put -r of N x 64 KiB, -c 1 (one file at a time), with and
# without strace -c on pxferd; per-file wall time, syscalls per file, time in fsync/rename.
set -euo pipefail
bin="${PXFER_BIN_DIR:-$(cd "$(dirname "$0")/../.." && pwd)/build/bin}"; n=${1:-1000}; W=$(mktemp -d /dev/shm/speed-sb.XXXX); spid=""
trap 'kill $spid 2>/dev/null; rm -rf $W' EXIT
mkdir -p $W/tree $W/root; for i in $(seq $n); do head -c 65536 /dev/urandom > $W/tree/f$i; done
export PXFER_KNOWN_HOSTS=$W/kh
start() { "$@" --root $W/root --listen 127.0.0.1:0 --insecure-no-auth --state-dir $W/st --port-file $W/port 2>/dev/null & spid=$!; for _ in $(seq 200); do [ -s $W/port ] && break; sleep 0.05; done; }
secs() { local t0=$(date +%s.%N); "$@" >/dev/null 2>&1; echo "$(date +%s.%N) - $t0" | bc; }
rm -f $W/port; start $bin/pxferd; u=pxfer://127.0.0.1:$(cat $W/port)
$bin/pxfer put -q $W/tree/f1 $u/warm >/dev/null 2>&1
for c in 1 8; do rm -rf $W/root/t; s=$(secs $bin/pxfer put -r -c $c $W/tree $u/t); echo "put -r -c $c: $n files in $s s = $(echo "$s * 1000000 / $n" | bc) us a file"; done
for c in 1 8; do rm -rf $W/get; s=$(secs $bin/pxfer get -r -c $c $u/t $W/get); echo "get -r -c $c: $n files in $s s = $(echo "$s * 1000000 / $n" | bc) us a file"; done
s=$(secs $bin/pxfer put -q $W/tree/f1 $u/one --overwrite); echo "one 64 KiB put, whole process (TLS handshake, login, OPEN, data connection, RESULT): $s s"
kill $spid; wait $spid 2>/dev/null || true
echo "== strace -f -c -w on pxferd during put -r -c 1 (wall time in each syscall; $n files)"
rm -f $W/port; rm -rf $W/root/t; strace -f -c -w -o $W/strace-put.txt $bin/pxferd --root $W/root --listen 127.0.0.1:0 --insecure-no-auth --state-dir $W/st --port-file $W/port 2>/dev/null & spid=$!
for _ in $(seq 200); do [ -s $W/port ] && break; sleep 0.05; done; u=pxfer://127.0.0.1:$(cat $W/port)
s=$(secs $bin/pxfer put -r -c 1 $W/tree $u/t); echo "(under strace: $s s)"; dpid=$(pgrep -P $spid || true)
kill $dpid 2>/dev/null || true; wait $spid 2>/dev/null || true  # pxferd by its PID (the child of strace)
head -25 $W/strace-put.txt
echo "== strace -f -c -w on the client during get -r -c 1"
rm -f $W/port; start $bin/pxferd; u=pxfer://127.0.0.1:$(cat $W/port); rm -rf $W/get
strace -f -c -w -o $W/strace-get.txt $bin/pxfer get -r -c 1 $u/t $W/get >/dev/null 2>&1 || true
head -25 $W/strace-get.txt
