#!/usr/bin/env bash
# The plugin's copy_bulk (issue 13.4) through gfal2's own bulk API (gfalt_copy_bulk, Python's
# filecopy with lists), which FTS3's many-file jobs use: every file arrives byte-exact; a missing
# source fails that file alone with ENOENT; gfal2's checksum check covers each file; a per-file checksum "ADLER32:VALUE" is checked (a
# wrong one fails that file with EIO and leaves no destination); and the files share one control
# connection, i.e. one TLS handshake and login: pxferd's result lines name one client address.
# Usage: tests/grid/gfal_bulk_test.sh BUILD_DIR   (ctest runs it as Grid.Gfal2Bulk)
set -euo pipefail
. "$(dirname "$0")/gfal_setup.sh" "${1:?usage: gfal_bulk_test.sh BUILD_DIR}"
count=12
for i in $(seq "$count"); do head -c $((1000 + i * 37000)) /dev/urandom > "$work/local/f$i.bin"; done
adler() { python3 -c 'import sys,zlib; print("%08x" % (zlib.adler32(open(sys.argv[1],"rb").read()) & 0xffffffff))' "$1"; }

# Puts: f1..f12 and a missing source, checked end to end (ADLER32 at both ends); then one-file
# bulks with a per-file checksum, wrong and right. (Python's binding keeps the C strings of a
# checksum list in a vector it grows, so only a one-entry list reaches C intact.)
run /usr/bin/python3 - "$work" "$base" "$count" "$(adler "$work/local/f1.bin")" <<'PY'
import errno, sys, gfal2
work, base, count, right = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
srcs = ["file://%s/local/f%d.bin" % (work, i) for i in range(1, count + 1)] + ["file://%s/local/missing.bin" % work]
dsts = ["%s/bulk/f%d.bin" % (base, i) for i in range(1, count + 1)] + ["%s/bulk/missing.bin" % base]
ctx = gfal2.creat_context()
params = ctx.transfer_parameters()
params.create_parent = True
params.nbstreams = 2
params.set_checksum(gfal2.checksum_mode.both, "ADLER32", "")
errors = ctx.filecopy(params, srcs, dsts)
codes = [e.code if e is not None else 0 for e in errors]
print("per-file errno:", codes, [e.message for e in errors if e is not None])
assert codes[:count] == [0] * count, codes
assert codes[count] == errno.ENOENT, "missing source: %r" % (errors[count],)
params = ctx.transfer_parameters()
wrong = ctx.filecopy(params, [srcs[0]], ["%s/bulk/wrong.bin" % base], ["ADLER32:00000001"])
assert wrong[0] is not None and wrong[0].code == errno.EIO, "wrong checksum: %r" % (wrong[0],)
params = ctx.transfer_parameters()
ok = ctx.filecopy(params, [srcs[0]], ["%s/bulk/right.bin" % base], ["ADLER32:" + right])
assert ok[0] is None, "right checksum: %r" % (ok[0],)
PY
check "gfalt_copy_bulk of $count files and a missing source, then per-file checksums ($out)" test "$rc" -eq 0
same=0
for i in $(seq "$count"); do cmp -s "$work/local/f$i.bin" "$work/root/bulk/f$i.bin" && same=$((same + 1)); done
check "all $count files arrived byte-exact ($same)" test "$same" -eq "$count"
check "the file with a wrong checksum left no destination" test ! -e "$work/root/bulk/wrong.bin"
check "the file with the right checksum arrived" cmp -s "$work/local/f1.bin" "$work/root/bulk/right.bin"
# One control connection for the whole bulk: every committed put names the same client address.
clients=$(grep 'result=ok' "$work/pxferd.log" | grep 'bulk/f' | grep 'direction=put' | grep -o 'client=[^ ]*' | sort -u | wc -l || true)
check "the bulk's puts shared one control connection ($clients client address(es) in pxferd's log)" test "$clients" -eq 1

# Gets, back into a local directory, in one bulk.
run /usr/bin/python3 - "$work" "$base" "$count" <<'PY'
import sys, gfal2
work, base, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
srcs = ["%s/bulk/f%d.bin" % (base, i) for i in range(1, count + 1)]
dsts = ["file://%s/local/back/f%d.bin" % (work, i) for i in range(1, count + 1)]
ctx = gfal2.creat_context()
params = ctx.transfer_parameters()
params.create_parent = True
errors = ctx.filecopy(params, srcs, dsts)
assert all(e is None for e in errors), errors
PY
check "gfalt_copy_bulk of $count gets ($out)" test "$rc" -eq 0
same=0
for i in $(seq "$count"); do cmp -s "$work/local/f$i.bin" "$work/local/back/f$i.bin" && same=$((same + 1)); done
check "all $count files came back byte-exact ($same)" test "$same" -eq "$count"

echo "gfal_bulk_test: $failures failure(s)"
[ "$failures" -eq 0 ]
