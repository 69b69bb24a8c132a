#!/usr/bin/env bash
# Streamed I/O on pxfer:// (issue 36): gfal2_open, read, write, lseek, pread, pwrite and close
# through the real library (python3-gfal2 run with /usr/bin/python3; ctypes on libgfal2 for the
# open flags Python's binding cannot pass) and gfal-cat, against a real pxferd. Round trips of
# several sizes compared byte for byte with files written outside, reads past the end, seeks,
# pwrite within written data and past it, the errno of each refusal, and a writer killed before
# its close.
# Usage: tests/grid/gfal_stream_test.sh BUILD_DIR   (ctest runs it as Grid.Gfal2StreamIo)
source "$(dirname "$0")/gfal_fixture.sh" "$@"
py=/usr/bin/python3

make_token a alice
"$bin/pxferd" token create reader --tokens "$work/a.tokens" | head -1 > "$work/reader.token"
printf 'alice / rw\nreader / ro\n' > "$work/a.access"
start_server a a --access "$work/a.access"
write_conf a
mkdir -p "$work/a.root/dir"

# --- Round trips: written through gfal2 in uneven pieces, compared with the bytes on disk and with
# a reference written outside pxfer, then read back through gfal2 (whole, piecewise, pread, seeks).
run $py - "$work" "$base_a" <<'PY'
import os, sys, gfal2
work, base = sys.argv[1:3]
ctx = gfal2.creat_context()
failed = []
for size in (0, 1, 4578, 100000, 5 * 1024 * 1024 + 17):
    data = os.urandom(size)
    ref = "%s/local/ref-%d.bin" % (work, size)
    open(ref, "wb").write(data)
    url = "%s/rt-%d.bin" % (base, size)
    f = ctx.open(url, "w")
    cuts = sorted({0, size // 3, min(size // 3 + 1, size), size})  # gfal2 itself refuses a write of nothing
    for a, b in zip(cuts, cuts[1:]):
        if f.write(data[a:b]) != b - a: failed.append("%d: short write" % size)
    if os.path.exists("%s/a.root/rt-%d.bin" % (work, size)): failed.append("%d: under its name before the close" % size)
    del f  # gfal2_close
    if open("%s/a.root/rt-%d.bin" % (work, size), "rb").read() != open(ref, "rb").read():
        failed.append("%d: the file on the server differs from the reference" % size)
    f = ctx.open(url, "r")
    whole = f.read_bytes(size + 10)
    pieces = b"".join(iter(lambda: f.read_bytes(7000), b""))  # at the end already: nothing
    if whole != data or pieces != b"": failed.append("%d: read back %d bytes, not the data" % (size, len(whole)))
    f.lseek(0, os.SEEK_SET)
    pieces = b"".join(iter(lambda: f.read_bytes(65536), b""))
    if pieces != data: failed.append("%d: piecewise read differs" % size)
    if f.read_bytes(100) != b"" or f.pread_bytes(size + 5, 100) != b"": failed.append("%d: bytes past the end" % size)
    if size > 200:
        if f.pread_bytes(size - 10, 100) != data[-10:]: failed.append("%d: pread over the end not short" % size)
        if f.pread_bytes(size // 2, 50) != data[size // 2:size // 2 + 50]: failed.append("%d: pread" % size)
        if f.lseek(-10, os.SEEK_END) != size - 10 or f.read_bytes(100) != data[-10:]: failed.append("%d: SEEK_END" % size)
        f.lseek(100, os.SEEK_SET)
        if f.lseek(5, os.SEEK_CUR) != 105 or f.read_bytes(20) != data[105:125]: failed.append("%d: SEEK_CUR" % size)
    del f
    print(size, "ok" if not failed else failed[-1])
sys.exit("; ".join(failed) if failed else 0)
PY
check "gfal2 open/write/close then open/read/pread/lseek at sizes 0, 1, 4578, 100000, 5 MiB+17: byte-exact ($out)" test "$rc" -eq 0

# --- pwrite within the written bytes; past them (a gap) EINVAL; the errno of each refusal.
echo "exists" > "$work/a.root/taken.bin"
run $py - "$work" "$base_a" "$(cat "$work/reader.token")" <<'PY'
import os, sys, gfal2
work, base, reader = sys.argv[1:4]
ctx = gfal2.creat_context()
failed = []
def expect(name, code, call, *args):
    try:
        call(*args)
        failed.append("%s: succeeded, expected errno %d" % (name, code))
    except gfal2.GError as e:
        print("%-52s errno %3d %s" % (name, e.code, str(e).splitlines()[0][:90]))
        if e.code != code: failed.append("%s: errno %d, expected %d (%s)" % (name, e.code, code, e))
data = bytearray(os.urandom(10000))
f = ctx.open(base + "/patched.bin", "w")
f.write(bytes(data))
if f.pwrite(b"X" * 100, 5000) != 100: failed.append("pwrite in the middle: short")
data[5000:5100] = b"X" * 100
expect("pwrite past the written bytes (a gap): EINVAL", 22, f.pwrite, b"Y", 10001)
f.pwrite(b"Z" * 10, 10000)  # right at the end: allowed
data += b"Z" * 10
del f
if open(work + "/a.root/patched.bin", "rb").read() != bytes(data): failed.append("pwrite: the file differs")
expect("open of nothing for reading: ENOENT", 2, ctx.open, base + "/none.bin", "r")
expect("open of a directory for reading: EISDIR", 21, ctx.open, base + "/dir", "r")
expect("open for reading and writing: EOPNOTSUPP", 95, ctx.open, base + "/rw.bin", "rw")
expect("open below a missing directory for writing: ENOENT", 2, ctx.open, base + "/nodir/x.bin", "w")
ro = gfal2.creat_context()
ro.cred_set(base + "/", ro.cred_new("BEARER", reader))
expect("a read-only token's open for writing: EACCES", 13, ro.open, base + "/ro.bin", "w")
if ro.open(base + "/patched.bin", "r").read_bytes(10) != bytes(data[:10]): failed.append("the read-only token cannot read")
sys.exit("; ".join(failed) if failed else 0)
PY
check "pwrite in the middle, a gap EINVAL; ENOENT, EISDIR, EOPNOTSUPP, EACCES ($out)" test "$rc" -eq 0
check "... nothing of the refused writes on the server" bash -c 'cd "$1/a.root" && [ ! -e ro.bin ] && [ ! -e rw.bin ] && [ -z "$(ls -A | grep pxfer-)" ]' _ "$work"

# O_CREAT|O_EXCL (which Python's binding cannot pass) onto a file: EEXIST, the file kept; and a
# name taken between an O_EXCL open and its close: EEXIST at the close, nothing replaced.
run $py - "$work" "$base_a" <<'PY'
import ctypes, os, sys
work, base = sys.argv[1:3]
class GError(ctypes.Structure):
    _fields_ = [("domain", ctypes.c_uint32), ("code", ctypes.c_int), ("message", ctypes.c_char_p)]
lib = ctypes.CDLL("libgfal2.so.2")
err = ctypes.POINTER(GError)()
lib.gfal2_context_new.restype = ctypes.c_void_p
lib.gfal2_open.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int, ctypes.c_void_p]
lib.gfal2_write.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_void_p]
lib.gfal2_write.restype = ctypes.c_ssize_t
lib.gfal2_close.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p]
ctx = lib.gfal2_context_new(ctypes.byref(err))
failed = []
excl = os.O_WRONLY | os.O_CREAT | os.O_EXCL
fd = lib.gfal2_open(ctx, (base + "/taken.bin").encode(), excl, ctypes.byref(err))
code = err.contents.code if fd < 0 else 0
print("O_EXCL onto a file: fd %d errno %d" % (fd, code))
if fd >= 0 or code != 17: failed.append("O_EXCL onto a file: fd %d, errno %d, expected EEXIST" % (fd, code))
err = ctypes.POINTER(GError)()
fd = lib.gfal2_open(ctx, (base + "/late.bin").encode(), excl, ctypes.byref(err))
if fd < 0: sys.exit("O_EXCL open of a new name failed: %s" % err.contents.message)
lib.gfal2_write(ctx, fd, b"mine", 4, ctypes.byref(err))
open(work + "/a.root/late.bin", "w").write("theirs")  # the name is taken meanwhile
rc = lib.gfal2_close(ctx, fd, ctypes.byref(err))
code = err.contents.code if rc != 0 else 0
print("close after the name was taken: rc %d errno %d" % (rc, code))
if rc == 0 or code != 17: failed.append("close onto a name taken meanwhile: rc %d, errno %d, expected EEXIST" % (rc, code))
sys.exit("; ".join(failed) if failed else 0)
PY
check "O_EXCL onto a file: EEXIST at the open; a name taken before the close: EEXIST at the close ($out)" test "$rc" -eq 0
check "... neither file replaced" bash -c '[ "$(cat "$1/taken.bin")" = exists ] && [ "$(cat "$1/late.bin")" = theirs ]' _ "$work/a.root"

# --- A writer killed before its close: nothing under the name, and its temporary goes with its
# connection.
$py - "$base_a" > "$work/writer.out" 2>&1 <<'PY' &
import os, sys, time, gfal2
f = gfal2.creat_context().open(sys.argv[1] + "/killed.bin", "w")
f.write(os.urandom(100000))
print("written", flush=True)
time.sleep(60)
PY
writer=$!
for _ in $(seq 100); do grep -q written "$work/writer.out" && break; sleep 0.1; done
check "a writer wrote before it was killed ($(cat "$work/writer.out"))" grep -q written "$work/writer.out"
check "... its temporary exists meanwhile" bash -c 'ls -A "$1" | grep -q "^\.killed\.bin\.pxfer-"' _ "$work/a.root"
kill -9 "$writer"; wait "$writer" 2>/dev/null || true
for _ in $(seq 50); do ls -A "$work/a.root" | grep -q '^\.killed\.bin\.pxfer-' || break; sleep 0.1; done
check "... after the kill nothing is under its name and its temporary is gone" \
  bash -c '[ ! -e "$1/killed.bin" ] && ! ls -A "$1" | grep -q "^\.killed\.bin\.pxfer-"' _ "$work/a.root"
check "... pxferd logged the abandoned write" grep -q "path=killed.bin streamed write abandoned" "$work/a.log"

# --- gfal-cat reads through the plugin's window; gfal-copy file:// -> pxfer:// still takes the
# plugin's own copy (OPEN and data streams), not gfal2's streamed fallback.
# (gfal-cat decodes what it reads as text unless -b, as it does for every protocol.)
start=$(date +%s%N)
gfal-cat -b "$base_a/rt-5242897.bin" > "$work/local/cat.bin" 2> "$work/cat.err" || true
cat_ms=$(( ($(date +%s%N) - start) / 1000000 ))
check "gfal-cat -b of 5 MiB equals the file (${cat_ms} ms; $(head -c 200 "$work/cat.err"))" cmp -s "$work/local/cat.bin" "$work/local/ref-5242897.bin"
gfal-cat -b "$base_a/rt-1.bin" > "$work/local/cat-one.bin" 2>&1 || true
check "gfal-cat -b of 1 byte equals the file" cmp -s "$work/local/cat-one.bin" "$work/local/ref-1.bin"
base64 -w 76 "$work/local/ref-100000.bin" > "$work/a.root/text.txt"
gfal-cat "$base_a/text.txt" > "$work/local/cat.txt" 2>&1 || true
check "gfal-cat of a text file equals it" cmp -s "$work/local/cat.txt" "$work/a.root/text.txt"
streamed=$(grep -c "streamed write committed" "$work/a.log")
run gfal-copy "file://$work/local/ref-100000.bin" "$base_a/copied.bin"
check "gfal-copy file:// -> pxfer:// ($out)" cmp -s "$work/local/ref-100000.bin" "$work/a.root/copied.bin"
check "... through the plugin's copy, not streamed writes" \
  bash -c '[ "$(grep -c "streamed write committed" "$1")" = "$2" ] && grep "path=copied.bin" "$1" | grep -q "put"' _ "$work/a.log" "$streamed"

finish
