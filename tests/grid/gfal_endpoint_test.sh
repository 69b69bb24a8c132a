#!/usr/bin/env bash
# pxfer:// as a complete gfal2 storage endpoint (issues 34 and 36), through the real library
# (python3-gfal2 run with /usr/bin/python3, and the gfal-* CLI) against two real pxferd:
# per-URL credentials in a third-party copy (each server sees only its own token); copy_bulk's
# per-file checksums on every path; MD5, CRC32 and SHA1 sums; the errno of every error class;
# chmod, access and the user.status extended attribute; gfal2_cancel in the middle of every kind
# of copy; a copy within one server that allows no peers.
# Usage: tests/grid/gfal_endpoint_test.sh BUILD_DIR   (ctest runs it as Grid.Gfal2Endpoint)
source "$(dirname "$0")/gfal_fixture.sh" "$@"
py=/usr/bin/python3

# Two servers, each knowing only its own identity's token; both may reach 127.0.0.1 (pull and push).
make_token a alice
make_token b bob
# B also knows a read-only identity (--access): the refusals of the errno table.
"$bin/pxferd" token create reader --tokens "$work/b.tokens" | head -1 > "$work/reader.token"
printf 'bob / rw\nreader / ro\n' > "$work/b.access"
start_server a a --tpc-allow "127.0.0.1:*"
start_server b b --tpc-allow "127.0.0.1:*" --access "$work/b.access"
write_conf a
head -c 3000017 /dev/urandom > "$work/a.root/src.bin"
token_id() { $py -c 'import hashlib,sys; print("token-id:" + hashlib.sha256(sys.argv[1].encode()).hexdigest()[:8])' "$(cat "$1")"; }
id_a=$(token_id "$work/a.token")
id_b=$(token_id "$work/b.token")

# --- Issue 34: a third-party copy with a different BEARER credential per URL (as FTS3 hands them).
# The source's token must never reach the destination, nor the destination's the source; -p makes
# the destination's parents with the destination's credential.
run $py - "$base_a" "$base_b" "$(cat "$work/a.token")" "$(cat "$work/b.token")" <<'PY'
import sys, gfal2
base_a, base_b, token_a, token_b = sys.argv[1:5]
ctx = gfal2.creat_context()
ctx.set_opt_string("PXFER", "TOKEN_FILE", "")  # only the per-URL credentials
ctx.cred_set(base_a + "/", ctx.cred_new("BEARER", token_a))
ctx.cred_set(base_b + "/", ctx.cred_new("BEARER", token_b))
for mode in ("pull", "push"):
    ctx.set_opt_string("PXFER", "COPY_MODE", mode)
    params = ctx.transfer_parameters()
    params.create_parent = True
    ctx.filecopy(params, base_a + "/src.bin", "%s/tpc/%s.bin" % (base_b, mode))
    print(mode, "ok")
PY
check "third-party pull and push with a different BEARER per URL ($out)" test "$rc" -eq 0
check "... byte-exact" bash -c 'cmp -s "$1/a.root/src.bin" "$1/b.root/tpc/pull.bin" && cmp -s "$1/a.root/src.bin" "$1/b.root/tpc/push.bin"' _ "$work"
check "... the destination never saw the source's token ($id_a)" bash -c '! grep -q "$1" "$2"' _ "$id_a" "$work/b.log"
check "... the source never saw the destination's token ($id_b)" bash -c '! grep -q "$1" "$2"' _ "$id_b" "$work/a.log"
check "... no authentication failed on either server" bash -c '! grep -h "authentication failed" "$1/a.log" "$1/b.log"' _ "$work"
check "... each server served its own identity" bash -c 'grep -q "identity=bob" "$1/b.log" && ! grep -q "identity=alice" "$1/b.log" && ! grep -q "identity=bob" "$1/a.log"' _ "$work"

# --- copy_bulk with per-file checksums: gfal2 hands the bare value (its algorithm is the transfer
# parameters', ADLER32 unless set) or ALGO:VALUE. A wrong one fails that file with EIO on every
# path and leaves nothing under its name; a right one passes.
head -c 1000003 /dev/urandom > "$work/local/bulk.bin"
cp "$work/local/bulk.bin" "$work/a.root/bulk.bin"
run $py - "$work" "$base_a" "$base_b" "$(cat "$work/a.token")" "$(cat "$work/b.token")" <<'PY'
import sys, zlib, hashlib, os, gfal2
work, base_a, base_b, token_a, token_b = sys.argv[1:6]
data = open(work + "/local/bulk.bin", "rb").read()
sha256 = hashlib.sha256(data).hexdigest()
md5 = hashlib.md5(data).hexdigest()
ctx = gfal2.creat_context()
ctx.cred_set(base_a + "/", ctx.cred_new("BEARER", token_a))
ctx.cred_set(base_b + "/", ctx.cred_new("BEARER", token_b))
local = "file://" + work + "/local/"
paths = {"file->pxfer": (local + "bulk.bin", base_b + "/bulk/put-%s.bin", work + "/b.root/bulk/put-%s.bin"),
         "pxfer->file": (base_a + "/bulk.bin", local + "get-%s.bin", work + "/local/get-%s.bin"),
         "pull": (base_a + "/bulk.bin", base_b + "/bulk/pull-%s.bin", work + "/b.root/bulk/pull-%s.bin"),
         "push": (base_a + "/bulk.bin", base_b + "/bulk/push-%s.bin", work + "/b.root/bulk/push-%s.bin")}
failed = []
for kind, (src, dst, on_disk) in paths.items():
    ctx.set_opt_string("PXFER", "COPY_MODE", "push" if kind == "push" else "pull")
    params = ctx.transfer_parameters()
    params.create_parent = True
    # Bare values take the parameters' algorithm (SHA256 here). Every value is 16 characters or
    # more: gfal2-python 1.12 keeps c_str() pointers into a std::vector<std::string> it goes on
    # growing, so a shorter (small-string) value reaches gfal2 as freed memory.
    params.set_user_defined_checksum("SHA256", "")
    names = ["right", "wrong", "algo", "wrongalgo"]
    sums = [sha256, "0" * 63 + "1", "MD5:" + md5, "ADLER32:0badc0de"]
    errors = ctx.filecopy(params, [src] * 4, [dst % n for n in names], sums)
    codes = [e.code if e else 0 for e in errors]
    print(kind, codes, [str(e) for e in errors if e])
    if codes != [0, 5, 0, 5]: failed.append("%s: errnos %s, expected [0, 5, 0, 5]" % (kind, codes))
    for n, code in zip(names, codes):
        if (code == 0) != os.path.exists(on_disk % n): failed.append("%s: %s on disk does not match its result" % (kind, n))
sys.exit("; ".join(failed) if failed else 0)
PY
check "copy_bulk with a right and a wrong per-file checksum on every path: right passes, wrong EIO, nothing left ($out)" test "$rc" -eq 0

# --- MD5, CRC32 and SHA1 (gfal-sum), against values computed outside pxfer and gfal2's own file
# plugin (CRC32: zlib's, printed in decimal as gfal2 prints it).
head -c 4578 /dev/urandom > "$work/local/sum.bin"
cp "$work/local/sum.bin" "$work/a.root/sum.bin"
sleep 1.2  # stored only once the file is a second old (io/stored_checksum.hpp): not a race with the load
crc=$($py -c 'import sys,zlib; print(zlib.crc32(open(sys.argv[1],"rb").read()))' "$work/local/sum.bin")
for algo in MD5 CRC32 SHA1 ADLER32 SHA256; do
  case $algo in
    MD5) want=$(md5sum < "$work/local/sum.bin" | cut -d' ' -f1) ;;
    SHA1) want=$(sha1sum < "$work/local/sum.bin" | cut -d' ' -f1) ;;
    SHA256) want=$(sha256sum < "$work/local/sum.bin" | cut -d' ' -f1) ;;
    CRC32) want=$crc ;;
    ADLER32) want=$($py -c 'import sys,zlib; print("%08x" % zlib.adler32(open(sys.argv[1],"rb").read()))' "$work/local/sum.bin") ;;
  esac
  run gfal-sum "$base_a/sum.bin" "$algo"
  check "gfal-sum $algo equals the value computed outside pxfer ($out)" test "$out" = "$base_a/sum.bin $want"
done
# Each stored value changes the file's ctime, and the next is stored once that is a second old.
sleep 1.2
for algo in MD5 CRC32; do
  run gfal-sum "file://$work/local/sum.bin" "$algo"
  local_value=${out##* }
  run gfal-sum "$base_a/sum.bin" "$algo"
  check "gfal-sum $algo of pxfer:// equals gfal2's file plugin's ($out, $local_value)" test "${out##* }" = "$local_value"
done
# A checksum is stored once the file is a second old (io/stored_checksum.hpp): by the second round.
check "... kept as extended attributes like adler32" $py -c 'import os, sys; names = os.listxattr(sys.argv[1]); sys.exit(0 if "user.pxfer.md5" in names and "user.pxfer.crc32" in names else names)' "$work/a.root/sum.bin"
run gfal-copy -K "CRC32:$crc" "file://$work/local/sum.bin" "$base_a/sum-copy.bin"
check "gfal-copy -K CRC32:VALUE (decimal, as gfal2 prints it) ($out)" test "$rc" -eq 0
run gfal-copy -K MD5 "$base_a/sum.bin" "file://$work/local/sum-md5.bin"
check "gfal-copy -K MD5 pxfer:// -> file:// ($out)" cmp -s "$work/local/sum.bin" "$work/local/sum-md5.bin"
run gfal-sum "$base_a/sum.bin" CRC32C
check "gfal-sum of an algorithm pxfer lacks: EOPNOTSUPP (95) ($rc: $out)" test "$rc" -eq 95

# --- The errno of each condition, as gfal2's gridftp and xrootd plugins give it (docs/grid.md),
# and chmod / access / user.status.
mkdir -p "$work/a.root/e/dir/sub" "$work/a.root/e/full/x"
echo data > "$work/a.root/e/file"
echo more > "$work/a.root/e/full/x/y"
run $py - "$base_a" "$base_b" "$(cat "$work/reader.token")" <<'PY'
import sys, os, gfal2
base_a, base_b, reader = sys.argv[1:4]
ctx = gfal2.creat_context()
ctx.cred_set(base_b + "/", ctx.cred_new("BEARER", reader))
failed = []
def expect(name, code, call, *args):
    try:
        call(*args)
        failed.append("%s: succeeded, expected errno %d" % (name, code))
    except gfal2.GError as e:
        print("%-40s errno %3d %s" % (name, e.code, str(e).splitlines()[0][:100]))
        if e.code != code: failed.append("%s: errno %d, expected %d (%s)" % (name, e.code, code, e))
E = base_a + "/e"
expect("stat of nothing: ENOENT", 2, ctx.stat, E + "/none")
expect("mkdir of an existing name: EEXIST", 17, ctx.mkdir, E + "/dir", 0o755)
expect("rename of a file onto a directory: EISDIR", 21, ctx.rename, E + "/file", E + "/dir")
expect("unlink of a directory: EISDIR", 21, ctx.unlink, E + "/dir")
expect("stat below a file: ENOTDIR", 20, ctx.stat, E + "/file/x")
expect("listdir of a file: ENOTDIR", 20, ctx.listdir, E + "/file")
expect("rmdir of a file: ENOTDIR", 20, ctx.rmdir, E + "/file")
expect("rename onto a directory not empty: ENOTEMPTY", 39, ctx.rename, E + "/dir", E + "/full")
expect("rmdir of a directory not empty: ENOTEMPTY", 39, ctx.rmdir, E + "/full")
expect("a read-only identity's mkdir: EACCES", 13, ctx.mkdir, base_b + "/ro", 0o755)
expect("a read-only identity's chmod: EACCES", 13, ctx.chmod, base_b + "/tpc/pull.bin", 0o600)
expect("an unknown checksum: EOPNOTSUPP", 95, ctx.checksum, E + "/file", "CRC64")
expect("user.status of nothing: ENOENT", 2, ctx.getxattr, E + "/none", "user.status")
expect("spacetoken: EOPNOTSUPP", 95, ctx.getxattr, E + "/file", "spacetoken")
# chmod, then access() and stat see it.
ctx.chmod(E + "/file", 0o640)
mode = ctx.stat(E + "/file").st_mode & 0o777
if mode != 0o640: failed.append("chmod 640 gave %o" % mode)
ctx.access(E + "/file", os.R_OK | os.W_OK)
ctx.chmod(E + "/file", 0o400)
expect("access(W_OK) after chmod 400: EACCES", 13, ctx.access, E + "/file", os.W_OK)
ctx.access(E + "/file", os.R_OK)
status = ctx.getxattr(E + "/file", "user.status")
if status != "ONLINE": failed.append("user.status %r, expected ONLINE" % status)
if "user.status" not in ctx.listxattr(E + "/file"): failed.append("listxattr lacks user.status")
sys.exit("; ".join(failed) if failed else 0)
PY
check "every errno of the table, chmod then access, user.status ($out)" test "$rc" -eq 0
check "... chmod reached the file" test "$(stat -c %a "$work/a.root/e/file")" = 400

# ENOSPC: a server whose export is a 1 MiB tmpfs (its own mount namespace) refuses a 3 MB put.
mkdir -p "$work/small.root"
unshare -m sh -c 'mount -t tmpfs -o size=1m tmpfs "$1" && shift && exec "$@"' _ "$work/small.root" \
  "$bin/pxferd" --root "$work/small.root" --listen 127.0.0.1:0 --port-file "$work/small.port" \
  --tokens "$work/a.tokens" --state-dir "$work/state/pxferd" 2> "$work/small.log" &
server_pids+=($!)
for _ in $(seq 100); do [ -s "$work/small.port" ] && break; sleep 0.1; done
run gfal-copy "file://$work/a.root/src.bin" "pxfer://127.0.0.1:$(cat "$work/small.port")/big.bin"
check "a put into a full file system: ENOSPC (28) ($rc: $out)" test "$rc" -eq 28

# --- A copy within one server: allowed without listing itself in --tpc-allow (it allows no peer
# at all), both modes; another server stays refused.
start_server solo a
echo "within one server" > "$work/solo.root/one.bin"
run gfal-copy --copy-mode pull "$base_solo/one.bin" "$base_solo/two.bin"
check "a copy within a server without --tpc-allow, pull ($out)" cmp -s "$work/solo.root/one.bin" "$work/solo.root/two.bin"
run gfal-copy --copy-mode push "$base_solo/one.bin" "$base_solo/three.bin"
check "... and push ($out)" cmp -s "$work/solo.root/one.bin" "$work/solo.root/three.bin"
run gfal-copy --copy-mode push "$base_solo/one.bin" "$base_a/from-solo.bin"
check "... while a copy to another server stays refused: EACCES (13) ($rc: $out)" test "$rc" -eq 13

# --- gfal2_cancel (ctx.cancel() from another thread, as FTS3 cancels a job) in the middle of each
# kind of copy: the call ends within 1 s with ECANCELED, nothing is under the destination name, and
# a third-party copy stops on both servers (the active one logs "copy aborted", the passive one
# the transfer "result=failed"). The paced server (2 MB/s, which paces a pull's writes
# as well as a put's) keeps a put, a pull and a push busy; a get reads a 2 GiB sparse file.
start_server slow a --emulate-disk-rate 2M --tpc-allow "127.0.0.1:*"
head -c 20000000 /dev/urandom > "$work/local/cancel.bin"
cp "$work/local/cancel.bin" "$work/a.root/cancel.bin"
truncate -s 2G "$work/a.root/sparse.bin"
run $py - "$work" "$base_a" "$base_slow" <<'PY'
import sys, os, time, threading, gfal2
work, base_a, base_slow = sys.argv[1:4]
failed = []
def attempt(kind, src, dst, on_disk, after, mode="pull", logs=()):
    ctx = gfal2.creat_context()
    ctx.set_opt_string("PXFER", "COPY_MODE", mode)
    params = ctx.transfer_parameters()
    params.nbstreams = 4
    sizes = [os.path.getsize(l) for l in logs]
    cancelled_at = []
    def cancel():
        time.sleep(after)
        cancelled_at.append(time.monotonic())
        ctx.cancel()
    t = threading.Thread(target=cancel)
    t.start()
    try:
        ctx.filecopy(params, src, dst)
        failed.append("%s: finished before the cancel" % kind)
        t.join()
        return
    except gfal2.GError as e:
        ended = time.monotonic()
        t.join()
        took = ended - cancelled_at[0] if cancelled_at else -1
        print("%-6s errno %d, ended %.3f s after the cancel: %s" % (kind, e.code, took, str(e).splitlines()[0][:90]))
        if e.code != 125: failed.append("%s: errno %d, expected ECANCELED (125)" % (kind, e.code))
        if not 0 <= took <= 1.0: failed.append("%s: ended %.3f s after the cancel" % (kind, took))
    if os.path.exists(on_disk): failed.append("%s: %s exists" % (kind, on_disk))
    # The active server of a third-party copy aborts it within 1 s of the cancel. The passive one
    # records it failed once its queued writes are done: into the paced server (a push) that is
    # up to 7 MB at 2 MB/s, since the emulated disk's sleep is not interrupted (issue 34's paced
    # writer); at a real disk's pace, at once.
    for log, size, limit in zip(logs, sizes, (1.0, 6.0)):
        while time.monotonic() < cancelled_at[0] + limit:
            text = open(log).read()[size:]
            if "result=failed" in text or "copy aborted" in text: break
            time.sleep(0.02)
        else:
            failed.append("%s: %s did not record the copy as failed within %g s" % (kind, os.path.basename(log), limit))
local = "file://" + work + "/local/"
attempt("put", local + "cancel.bin", base_slow + "/put.bin", work + "/slow.root/put.bin", 1.0)
attempt("get", base_a + "/sparse.bin", local + "got.bin", work + "/local/got.bin", 0.3)
attempt("pull", base_a + "/cancel.bin", base_slow + "/pull.bin", work + "/slow.root/pull.bin", 1.0,
        "pull", [work + "/slow.log", work + "/a.log"])
attempt("push", base_a + "/cancel.bin", base_slow + "/push.bin", work + "/slow.root/push.bin", 1.0,
        "push", [work + "/a.log", work + "/slow.log"])
sys.exit("; ".join(failed) if failed else 0)
PY
check "gfal2_cancel stops a put, a get, a pull and a push within 1 s: ECANCELED, no destination ($out)" test "$rc" -eq 0

# --- gfal2's timeout bounds a third-party pull into a slow server (its pulled writes paced at
# 2 MB/s: 20 MB need 10 s): ETIMEDOUT within a few seconds, the copy stopped on the server doing
# it, nothing under the name.
size=$(wc -c < "$work/slow.log")
start=$(date +%s%N)
run gfal-copy -T 2 --copy-mode pull "$base_a/cancel.bin" "$base_slow/timed.bin"
took_ms=$(( ($(date +%s%N) - start) / 1000000 ))
check "gfal-copy -T 2 of a pull into a slow server: ETIMEDOUT (110) in ${took_ms} ms ($rc: $out)" \
  bash -c '[ "$1" -eq 110 ] && [ "$2" -le 5000 ]' _ "$rc" "$took_ms"
for _ in $(seq 50); do tail -c +$((size + 1)) "$work/slow.log" | grep -Eq "result=failed|copy aborted" && break; sleep 0.1; done
check "... the pulling server stopped the copy" bash -c 'tail -c +$(($2 + 1)) "$1" | grep -Eq "result=failed|copy aborted"' _ "$work/slow.log" "$size"
check "... and nothing under the destination name" test ! -e "$work/slow.root/timed.bin"

finish
