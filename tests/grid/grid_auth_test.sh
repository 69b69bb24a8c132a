#!/usr/bin/env bash
# Issue 35, grid identities, end to end with real credentials (tests/grid/make_credentials.py,
# made once here): one pxferd with --x509 (a grid CA directory with a CRL), --voms-dir and
# --token-issuers; the real pxfer client with proxies, VOMS proxies and WLCG JWTs. Accepted: a
# proxy, a proxy of a proxy, an end-entity certificate, a VOMS proxy mapped by FQAN, tokens with
# the right scopes, each doing put/get/ls/rm within its rights and refused outside them. Refused
# with exit 4 and one line each: every flawed chain, AC and token the credential maker makes.
# Usage: tests/grid/grid_auth_test.sh BUILD_DIR   (ctest runs it as Grid.Identities)
set -uo pipefail
build=$(cd "${1:?usage: grid_auth_test.sh BUILD_DIR}" && pwd)
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
bin=$build/bin
work=$(mktemp -d /tmp/pxfer-grid-auth.XXXXXX)
spid=""
cleanup() { [ -n "$spid" ] && kill "$spid" 2>/dev/null && wait "$spid" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
/usr/bin/python3 "$here/make_credentials.py" "$work/c" || { echo "grid_auth_test: FAIL - make_credentials.py" >&2; exit 1; }
c=$work/c
jane="/DC=org/DC=pxfer-test/OU=Users/CN=Jane Doe"
vera="/DC=org/DC=pxfer-test/OU=Users/CN=Vera Voms"
root=$work/root
mkdir -p "$root/pub" "$root/jane" "$root/other" "$root/vo" "$root/tokens/in" "$work/local" "$work/run"
echo public > "$root/pub/readme.txt"; echo secret > "$root/other/secret.txt"; echo tokens > "$root/tokens/readme.txt"
cat > "$work/access" <<ACCESS
# grid users by DN (quoted: spaces), VOMS FQANs, tokens by scope
"$jane" /jane rw
"$jane" pub ro
fqan:/testvo/Role=production /vo rw
fqan:/testvo pub ro
ACCESS
chmod 600 "$work/access"
# No credential from the environment of whoever runs the test.
unset PXFER_TOKEN BEARER_TOKEN BEARER_TOKEN_FILE X509_USER_PROXY
export XDG_RUNTIME_DIR=$work/run XDG_CONFIG_HOME=$work/config XDG_STATE_HOME=$work/state

"$bin/pxferd" --root "$root" --listen 127.0.0.1:0 --port-file "$work/port" --access "$work/access" \
  --x509 --x509-ca-dir "$c/certificates" --voms-dir "$c/vomsdir" --token-issuers "$c/token-issuers.toml" \
  --cert "$c/host.pem" --key "$c/host.key" 2>"$work/server.log" & spid=$!
for _ in $(seq 200); do [ -s "$work/port" ] && break; sleep 0.05; done
[ -s "$work/port" ] || { echo "grid_auth_test: FAIL - pxferd did not start:"; cat "$work/server.log"; exit 1; } >&2
fp=$("$bin/pxferd" fingerprint --cert "$c/host.pem")
url() { echo "pxfer://127.0.0.1:$(cat "$work/port")/$1"; }
px() { "$bin/pxfer" "$@" --fingerprint "$fp"; }
cred() {  # --cert/--key for a credential name: a proxy file holds its key, a certificate has it beside
  case $1 in *proxy*) echo "--cert $c/$1.pem --key $c/$1.pem" ;; *) echo "--cert $c/$1.pem --key $c/$1.key" ;; esac
}
failures=0
fail() { echo "grid_auth_test: FAIL - $*" >&2; failures=$((failures + 1)); }
ok() {  # ok NAME COMMAND...: exit 0
  local name=$1; shift
  "$@" >"$work/out" 2>"$work/err" || fail "$name: exit $? ($(cat "$work/err"))"
}
refused() {  # refused NAME NEEDLE COMMAND...: exit 4, one line on stderr naming NEEDLE
  local name=$1 needle=$2; shift 2
  "$@" >"$work/out" 2>"$work/err"; local rc=$?
  [ $rc -eq 4 ] || fail "$name: exit $rc, not 4 ($(cat "$work/err"))"
  [ "$(wc -l < "$work/err")" -eq 1 ] || fail "$name: stderr is not one line: $(cat "$work/err")"
  grep -qF -- "$needle" "$work/err" || fail "$name: stderr does not say '$needle': $(cat "$work/err")"
}
accounting_has() {  # accounting_has PATH IDENTITY
  for _ in $(seq 50); do grep -q "path=$1 " "$work/server.log" && break; sleep 0.05; done
  grep "path=$1 " "$work/server.log" | grep -qF -e "identity=\"$2\"" -e "identity=$2 " || fail "accounting of $1 does not name $2: $(grep "path=$1 " "$work/server.log")"
}
L=$work/local
head -c 300007 /dev/urandom > "$L/a.bin"

# ---- X.509: proxies and end-entity certificates, by DN ----
ok proxy-put px put "$L/a.bin" "$(url jane/a.bin)" $(cred proxy)
accounting_has jane/a.bin "$jane"
ok proxy-get px get "$(url jane/a.bin)" "$L/back.bin" $(cred proxy)
cmp -s "$L/a.bin" "$L/back.bin" || fail "proxy-get: bytes differ"
ok proxy-ls px ls "$(url jane/)" $(cred proxy)
grep -q a.bin "$work/out" || fail "proxy-ls: a.bin not listed"
ok proxy-rm px rm "$(url jane/a.bin)" $(cred proxy)
[ ! -e "$root/jane/a.bin" ] || fail "proxy-rm: the file is still there"
refused proxy-write-read-only "read-only" px put "$L/a.bin" "$(url pub/w.bin)" $(cred proxy)
refused proxy-read-other "may not read" px get "$(url other/secret.txt)" "$L/s.txt" $(cred proxy)
ok proxy-of-proxy-put px put "$L/a.bin" "$(url jane/b.bin)" $(cred proxy2)
accounting_has jane/b.bin "$jane"
X509_USER_PROXY=$c/proxy2.pem ok proxy-from-x509-user-proxy px get "$(url jane/b.bin)" "$L/b.bin"
# No pin: a grid credential checks the host certificate against X509_CERT_DIR and the host name.
X509_CERT_DIR=$c/certificates ok x509-cert-dir "$bin/pxfer" get "pxfer://localhost:$(cat "$work/port")/pub/readme.txt" "$L/r8.txt" $(cred proxy)
X509_CERT_DIR=$c/vomsdir refused x509-cert-dir-without-the-ca "does not verify" "$bin/pxfer" get "$(url pub/readme.txt)" "$L/r3.txt" $(cred proxy)
ok end-entity-get px get "$(url pub/readme.txt)" "$L/r1.txt" $(cred user)
refused dn-without-lines "has no access" px get "$(url pub/readme.txt)" "$L/r2.txt" $(cred joe)
refused expired-proxy "certificate has expired" px get "$(url pub/readme.txt)" "$L/r3.txt" $(cred expired-proxy)
refused unknown-ca "unable to get local issuer certificate" px get "$(url pub/readme.txt)" "$L/r3.txt" $(cred unknown-ca-proxy)
refused issuer-not-parent "certificate signature failure" px get "$(url pub/readme.txt)" "$L/r3.txt" $(cred bad-parent-proxy)
refused subject-not-below-issuer "proxy subject name violation" px get "$(url pub/readme.txt)" "$L/r3.txt" $(cred bad-subject-proxy)
refused crl-revoked "certificate revoked" px get "$(url pub/readme.txt)" "$L/r3.txt" $(cred revoked-proxy)

# ---- VOMS: mapped by FQAN, bad ACs refused ----
ok voms-put px put "$L/a.bin" "$(url vo/v.bin)" $(cred voms-proxy)
accounting_has vo/v.bin "$vera (/testvo/Role=production)"
ok voms-get px get "$(url pub/readme.txt)" "$L/r4.txt" $(cred voms-proxy)
refused voms-outside "may not write" px put "$L/a.bin" "$(url jane/v.bin)" $(cred voms-proxy)
refused voms-forged "Cannot verify AC signature" px get "$(url pub/readme.txt)" "$L/r5.txt" $(cred voms-forged-proxy)
refused voms-expired "AC not valid anymore" px get "$(url pub/readme.txt)" "$L/r5.txt" $(cred voms-expired-proxy)
refused voms-wrong-vo "VOMS attributes refused" px get "$(url pub/readme.txt)" "$L/r5.txt" $(cred voms-wrongvo-proxy)

# ---- WLCG tokens: scopes below the issuer's base path (/tokens) ----
tok=$c/tok-rw.jwt
ok token-put px put "$L/a.bin" "$(url tokens/in/t.bin)" --token-file "$tok"
accounting_has tokens/in/t.bin "token:user-1234@https://issuer.pxfer-test.org/"
ok token-get px get "$(url tokens/in/t.bin)" "$L/t.bin" --token-file "$tok"
cmp -s "$L/a.bin" "$L/t.bin" || fail "token-get: bytes differ"
ok token-ls px ls "$(url tokens/in/)" --token-file "$tok"
ok token-rm px rm "$(url tokens/in/t.bin)" --token-file "$tok"
refused token-write-outside-create-scope "may not write" px put "$L/a.bin" "$(url tokens/t.bin)" --token-file "$tok"
refused token-read-outside-base-path "may not read" px get "$(url pub/readme.txt)" "$L/p.txt" --token-file "$tok"
BEARER_TOKEN_FILE=$c/tok-rs256.jwt ok token-rs256-discovered px get "$(url tokens/readme.txt)" "$L/r6.txt"
cp "$c/tok-rw.jwt" "$work/run/bt_u$(id -u)"
ok token-xdg-runtime-dir px stat "$(url tokens/readme.txt)"
rm "$work/run/bt_u$(id -u)"
for t in "expired:it expired" "not-yet-valid:not valid yet" "wrong-audience:audience" "any-audience:audience" \
         "unknown-issuer:not one this server trusts" "bad-signature:signature does not verify" \
         "alg-none:algorithm 'none'" "hs256-public-key:algorithm 'HS256'" \
         "stage-only:no storage.read/create/modify scope"; do
  refused "token-${t%%:*}" "${t#*:}" px get "$(url tokens/readme.txt)" "$L/r7.txt" --token-file "$c/tok-${t%%:*}.jwt"
done
refused token-scope-for-another-path "may not write" px put "$L/a.bin" "$(url tokens/in/x.bin)" --token-file "$c/tok-other-path.jwt"
refused token-read-scope-writing "may not write" px put "$L/a.bin" "$(url tokens/in/x.bin)" --token-file "$c/tok-read-only.jwt"
[ ! -e "$root/tokens/in/x.bin" ] || fail "a refused token wrote tokens/in/x.bin"
[ ! -e "$L/r3.txt" ] && [ ! -e "$L/r5.txt" ] && [ ! -e "$L/r7.txt" ] || fail "a refused credential got a file"
for f in "$c"/tok-*.jwt; do
  grep -qF "$(cut -d. -f2 "$f" | head -c 40)" "$work/server.log" && fail "the server log holds a token ($f)"
done

# ---- operator tooling: the trust settings in --print-config ----
"$bin/pxferd" --root "$root" --x509 --x509-ca-dir "$c/certificates" --voms-dir "$c/vomsdir" \
  --token-issuers "$c/token-issuers.toml" --print-config > "$work/config" 2>&1 || fail "print-config: exit $?"
for key in "x509 = true" "x509-ca-dir = \"$c/certificates\"" "voms-dir = \"$c/vomsdir\"" "token-issuers = "; do
  grep -qF -- "$key" "$work/config" || fail "print-config does not show '$key': $(cat "$work/config")"
done

# ---- operator tooling: pxferd check-credential says what a proxy or token would get, and why ----
check() { "$bin/pxferd" --x509 --x509-ca-dir "$c/certificates" --voms-dir "$c/vomsdir" \
  --token-issuers "$c/token-issuers.toml" --access "$work/access" check-credential "$@"; }
check "$c/voms-proxy.pem" > "$work/check" 2>&1 || fail "check-credential voms-proxy: exit $? ($(cat "$work/check"))"
for want in "identity: $vera (/testvo/Role=production)" "fqan: /testvo/analysis" "/vo read write" "/pub read"; do
  grep -qF -- "$want" "$work/check" || fail "check-credential voms-proxy does not say '$want': $(cat "$work/check")"
done
check - < "$c/tok-rw.jwt" > "$work/check" 2>&1 || fail "check-credential token: exit $? ($(cat "$work/check"))"
for want in "identity: token:user-1234@https://issuer.pxfer-test.org/" "/tokens/in read write" "/tokens read"; do
  grep -qF -- "$want" "$work/check" || fail "check-credential token does not say '$want': $(cat "$work/check")"
done
refused check-revoked "certificate revoked" check "$c/revoked-proxy.pem"
refused check-expired-token "it expired" check "$c/tok-expired.jwt"

if [ $failures -ne 0 ]; then echo "--- server log"; tail -30 "$work/server.log"; exit 1; fi
echo "grid_auth_test: all passed"
