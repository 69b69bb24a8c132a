#!/usr/bin/env bash
# gfal2 with grid X.509 credentials (issue 35 point 5), through the real gfal-copy and python3-gfal2
# against pxferd --x509 servers that admit one grid identity each (tests/grid/make_credentials.py):
# gfal-copy with X509_USER_PROXY (a VOMS proxy) into a server that admits only its FQAN, and the
# same copy without it refused with EACCES; a third-party copy (pull and push) where ctx.cred_set
# gives the source and the destination different X.509 credentials, each server seeing only its
# own DN; gfal2's own [X509] CERT/KEY configuration used as the default. No pin anywhere: the servers' grid host certificate is verified against X509_CERT_DIR with
# the host name, as gsiftp and davs clients do.
# Usage: tests/grid/gfal_grid_test.sh BUILD_DIR   (ctest runs it as Grid.Gfal2GridCredentials)
source "$(dirname "$0")/gfal_fixture.sh" "$@"
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
py=/usr/bin/python3
$py "$here/make_credentials.py" "$work/c" >/dev/null || { echo "$0: make_credentials.py failed" >&2; exit 1; }
c=$work/c
jane="/DC=org/DC=pxfer-test/OU=Users/CN=Jane Doe"
joe="/DC=org/DC=pxfer-test/OU=Users/CN=Joe Bloggs"
vera="/DC=org/DC=pxfer-test/OU=Users/CN=Vera Voms"
unset PXFER_TOKEN BEARER_TOKEN BEARER_TOKEN_FILE X509_USER_PROXY X509_USER_CERT X509_USER_KEY
export X509_CERT_DIR=$c/certificates

make_token nobody nobody  # the fixture's servers want a tokens file; no client here holds its token
printf '"%s" / rw\n' "$jane" > "$work/a.access"
printf '"%s" / rw\n' "$joe" > "$work/b.access"
printf 'fqan:/testvo/Role=production / rw\n' > "$work/v.access"
grid=(--x509 --x509-ca-dir "$c/certificates" --voms-dir "$c/vomsdir" --cert "$c/host.pem" --key "$c/host.key")
start_server a nobody "${grid[@]}" --access "$work/a.access" --tpc-allow "127.0.0.1:*"
start_server b nobody "${grid[@]}" --access "$work/b.access" --tpc-allow "127.0.0.1:*"
start_server v nobody "${grid[@]}" --access "$work/v.access"
printf '[PXFER]\nCONNECT_TIMEOUT=5\n' > "$work/conf/pxfer_plugin.conf"
head -c 1000003 /dev/urandom > "$work/local/src.bin"
cp "$work/local/src.bin" "$work/a.root/src.bin"

# --- gfal-copy with X509_USER_PROXY (a VOMS proxy), by host name: admitted by its FQAN.
run env X509_USER_PROXY="$c/voms-proxy.pem" gfal-copy "file://$work/local/src.bin" "pxfer://localhost:$port_v/in.bin"
check "gfal-copy with X509_USER_PROXY (VOMS proxy) into a server admitting its FQAN ($out)" test "$rc" -eq 0
check "... byte-exact" cmp -s "$work/local/src.bin" "$work/v.root/in.bin"
check "... the server names the DN and FQAN" grep -qF "identity=\"$vera (/testvo/Role=production)\"" "$work/v.log"
run gfal-copy "file://$work/local/src.bin" "pxfer://localhost:$port_v/in2.bin"
check "without X509_USER_PROXY: refused with EACCES ($out)" bash -c '[ "$1" -ne 0 ] && grep -q "Permission denied\|(13)\|error: 13" <<<"$2"' _ "$rc" "$out"
check "... nothing under the name" test ! -e "$work/v.root/in2.bin"
run env X509_USER_PROXY="$c/proxy.pem" gfal-copy "file://$work/local/src.bin" "pxfer://localhost:$port_v/in3.bin"
check "a proxy without the FQAN: refused with EACCES ($out)" bash -c '[ "$1" -ne 0 ] && grep -q "Permission denied\|(13)\|error: 13" <<<"$2"' _ "$rc" "$out"
run env X509_USER_PROXY="$c/voms-proxy.pem" X509_CERT_DIR="$c/vomsdir" gfal-copy "file://$work/local/src.bin" "pxfer://localhost:$port_v/in4.bin"
check "a host certificate X509_CERT_DIR does not verify: refused ($out)" bash -c '[ "$1" -ne 0 ] && grep -q "verif" <<<"$2"' _ "$rc" "$out"

# --- A third-party copy with a different X.509 credential per URL: Jane's proxy (key inside) for
# the source, Joe's certificate and key for the destination; the process's proxy (X509_USER_PROXY,
# Vera's) is the default neither server admits.
run env X509_USER_PROXY="$c/voms-proxy.pem" $py - "$base_a" "$base_b" "$c" <<'PY'
import sys, gfal2
base_a, base_b, c = sys.argv[1:4]
ctx = gfal2.creat_context()
ctx.cred_set(base_a + "/", ctx.cred_new("X509_CERT", c + "/proxy.pem"))
ctx.cred_set(base_b + "/", ctx.cred_new("X509_CERT", c + "/joe.pem"))
ctx.cred_set(base_b + "/", ctx.cred_new("X509_KEY", c + "/joe.key"))
for mode in ("pull", "push"):
    ctx.set_opt_string("PXFER", "COPY_MODE", mode)
    params = ctx.transfer_parameters()
    params.create_parent = True
    ctx.filecopy(params, base_a + "/src.bin", "%s/tpc/%s.bin" % (base_b, mode))
    print(mode, "ok")
PY
check "third-party pull and push with a different X.509 credential per URL ($out)" test "$rc" -eq 0
check "... byte-exact" bash -c 'cmp -s "$1/a.root/src.bin" "$1/b.root/tpc/pull.bin" && cmp -s "$1/a.root/src.bin" "$1/b.root/tpc/push.bin"' _ "$work"
check "... the source served Jane only" bash -c 'grep -qF "$1" "$3" && ! grep -qF -e "$2" -e "Vera" "$3"' _ "$jane" "$joe" "$work/a.log"
check "... the destination served Joe only" bash -c 'grep -qF "$2" "$3" && ! grep -qF -e "$1" -e "Vera" "$3"' _ "$jane" "$joe" "$work/b.log"
check "... no authentication failed on either server" bash -c '! grep -h "authentication failed" "$1/a.log" "$1/b.log"' _ "$work"

# --- gfal2's own X.509 configuration ([X509] CERT/KEY, as /etc/gfal2.d/x509.conf holds it): Joe's
# certificate, with its key beside it, into the server admitting Joe.
printf '[X509]\nCERT=%s\nKEY=%s\n' "$c/joe.pem" "$c/joe.key" > "$work/conf/x509.conf"
run gfal-copy "file://$work/local/src.bin" "$base_b/from-x509-conf.bin"
check "gfal-copy with gfal2's [X509] CERT/KEY ($out)" test "$rc" -eq 0
rm "$work/conf/x509.conf"
finish
