#!/usr/bin/env bash
# Issue 35, token issuers and reloads, with real pxferd processes and the real pxfer client:
# - [[issuer]] tables of pxferd.toml (no --token-issuers): a token accepted from them alone;
#   --print-config shows them, --check-config refuses a bad key file in one line naming the file
#   and the table's index;
# - SIGHUP re-reads them: a new issuer's token refused, the issuer added, SIGHUP, accepted; removed,
#   SIGHUP, refused again; a CRL added to the --x509-ca-dir counts after SIGHUP;
# - keys over HTTPS: an issuer without key_file, served by tests/grid/jwks_server.py on loopback
#   (openid-configuration -> jwks_uri -> JWKS, EC and RSA keys by kid): its tokens accepted, one
#   signed by another key refused, the JWKS's CA not trusted refused, the issuer down refused, each
#   with a log line saying why;
# - --metrics-per-identity names a token subject, bounded to limits::metrics_identity_label_bytes.
# Usage: tests/grid/grid_issuers_test.sh BUILD_DIR   (ctest runs it as Grid.TokenIssuers)
set -uo pipefail
build=$(cd "${1:?usage: grid_issuers_test.sh BUILD_DIR}" && pwd)
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
bin=$build/bin
work=$(mktemp -d /tmp/pxfer-grid-issuers.XXXXXX)
pids=()
cleanup() {
  local p
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null; done
  rm -rf "$work"
}
trap cleanup EXIT
/usr/bin/python3 "$here/make_credentials.py" "$work/c" || { echo "grid_issuers_test: FAIL - make_credentials.py" >&2; exit 1; }
c=$work/c
unset PXFER_TOKEN BEARER_TOKEN BEARER_TOKEN_FILE X509_USER_PROXY
export XDG_RUNTIME_DIR=$work/run XDG_CONFIG_HOME=$work/config XDG_STATE_HOME=$work/state
root=$work/root
mkdir -p "$root/tokens/in" "$work/run" "$work/local"
echo tokens > "$root/tokens/readme.txt"
printf '"/DC=org/DC=pxfer-test/OU=Users/CN=Jane Doe" / rw\n' > "$work/access"
chmod 600 "$work/access"
failures=0
fail() { echo "grid_issuers_test: FAIL - $*" >&2; failures=$((failures + 1)); }
fp=$("$bin/pxferd" fingerprint --cert "$c/host.pem")
px() { "$bin/pxfer" "$@" --fingerprint "$fp"; }
ok() { local name=$1; shift; "$@" >"$work/out" 2>"$work/err" || fail "$name: exit $? ($(cat "$work/err"))"; }
refused() {  # refused NAME NEEDLE COMMAND...: exit 4, one line on stderr naming NEEDLE
  local name=$1 needle=$2; shift 2
  "$@" >"$work/out" 2>"$work/err"; local rc=$?
  [ $rc -eq 4 ] || fail "$name: exit $rc, not 4 ($(cat "$work/err"))"
  [ "$(wc -l < "$work/err")" -eq 1 ] || fail "$name: stderr is not one line: $(cat "$work/err")"
  grep -qF -- "$needle" "$work/err" || fail "$name: stderr does not say '$needle': $(cat "$work/err")"
}
start() {  # start NAME ARGS...: pxferd on an ephemeral port; port_NAME, log $work/NAME.log
  local name=$1; shift
  "$bin/pxferd" --root "$root" --listen 127.0.0.1:0 --port-file "$work/$name.port" --cert "$c/host.pem" \
    --key "$c/host.key" "$@" 2>"$work/$name.log" & pids+=($!)
  printf -v "pid_$name" '%s' "$!"
  for _ in $(seq 200); do [ -s "$work/$name.port" ] && break; sleep 0.05; done
  [ -s "$work/$name.port" ] || { echo "grid_issuers_test: FAIL - pxferd $name did not start:"; cat "$work/$name.log"; exit 1; } >&2
  printf -v "port_$name" '%s' "$(cat "$work/$name.port")"
}
reloads() { grep -c "reloaded: token issuers" "$1" 2>/dev/null; }
hup() {  # hup NAME: SIGHUP and wait for its reload to be logged
  local log=$work/$1.log pid_var=pid_$1 before
  before=$(reloads "$log")
  kill -HUP "${!pid_var}"
  for _ in $(seq 100); do [ "$(reloads "$log")" -gt "$before" ] && return; grep -q "reload refused" "$log" && break; sleep 0.05; done
  fail "SIGHUP of $1 logged no reload: $(tail -3 "$log")"
}
issuer() {  # issuer URL [KEY_FILE]: an [[issuer]] table
  printf '\n[[issuer]]\nurl = "%s"\nbase_path = "/tokens"\naudience = ["pxfer-test"]\n' "$1"
  [ -n "${2:-}" ] && printf 'key_file = "%s"\n' "$2"
}
good="https://issuer.pxfer-test.org/"
new="https://evil.example.org/"  # tok-unknown-issuer.jwt's issuer, signed with the same key

# ---- [[issuer]] tables of pxferd.toml: --print-config, --check-config ----
issuer "$good" "$c/issuer-keys.pem" > "$work/pxferd.toml"
"$bin/pxferd" --config "$work/pxferd.toml" --root "$root" --print-config > "$work/config" 2>&1 || fail "print-config: exit $?"
for want in "[[issuer]]" "url = \"$good\"" "base_path = \"/tokens\"" "audience = [\"pxfer-test\"]" "key_file = \"$c/issuer-keys.pem\""; do
  grep -qF -- "$want" "$work/config" || fail "print-config does not show '$want': $(cat "$work/config")"
done
{ issuer "$good" "$c/issuer-keys.pem"; issuer "$new" "$work/missing-keys.pem"; } > "$work/bad.toml"
"$bin/pxferd" --config "$work/bad.toml" --root "$root" --listen 127.0.0.1:0 --check-config >"$work/out" 2>"$work/err"; rc=$?
[ $rc -ne 0 ] || fail "check-config with a missing key file: exit 0"
[ "$(wc -l < "$work/err")" -eq 1 ] || fail "check-config: not one line: $(cat "$work/err")"
for want in "$work/bad.toml" "[[issuer]] #2" "$work/missing-keys.pem"; do
  grep -qF -- "$want" "$work/err" || fail "check-config does not name '$want': $(cat "$work/err")"
done
"$bin/pxferd" --config "$work/pxferd.toml" --root "$root" --listen 127.0.0.1:0 --check-config >"$work/out" 2>&1 ||
  fail "check-config of a good [[issuer]]: $(cat "$work/out")"

# ---- a token accepted from the TOML's issuers only; SIGHUP adds and removes issuers ----
mkdir -p "$work/cadir"
cp "$c/certificates/test-ca.pem" "$work/cadir/" && openssl rehash "$work/cadir" >/dev/null 2>&1  # no CRL yet
start r --config "$work/pxferd.toml" --x509 --x509-ca-dir "$work/cadir" --voms-dir "$c/vomsdir" --access "$work/access"
url() { echo "pxfer://127.0.0.1:$2/$1"; }
ok toml-issuer-token px stat "$(url tokens/readme.txt "$port_r")" --token-file "$c/tok-rw.jwt"
refused new-issuer-before "not one this server trusts" px stat "$(url tokens/readme.txt "$port_r")" --token-file "$c/tok-unknown-issuer.jwt"
issuer "$new" "$c/issuer-keys.pem" >> "$work/pxferd.toml"
hup r
grep -qF "added: $new" "$work/r.log" || fail "the reload does not name the added issuer: $(grep reloaded "$work/r.log")"
ok new-issuer-after-sighup px stat "$(url tokens/readme.txt "$port_r")" --token-file "$c/tok-unknown-issuer.jwt"
issuer "$good" "$c/issuer-keys.pem" > "$work/pxferd.toml"
hup r
refused removed-issuer "not one this server trusts" px stat "$(url tokens/readme.txt "$port_r")" --token-file "$c/tok-unknown-issuer.jwt"
ok kept-issuer px stat "$(url tokens/readme.txt "$port_r")" --token-file "$c/tok-rw.jwt"
# The CA directory is read again: a CRL put there counts from the next connection.
refused crl-absent "has no access" px stat "$(url tokens/readme.txt "$port_r")" --cert "$c/revoked-proxy.pem" --key "$c/revoked-proxy.pem"
cp "$c/certificates/test-ca.crl.pem" "$work/cadir/" && openssl rehash "$work/cadir" >/dev/null 2>&1
hup r
refused crl-after-sighup "certificate revoked" px stat "$(url tokens/readme.txt "$port_r")" --cert "$c/revoked-proxy.pem" --key "$c/revoked-proxy.pem"
ok proxy-after-sighup px stat "$(url tokens/readme.txt "$port_r")" --cert "$c/proxy.pem" --key "$c/proxy.pem"

# ---- keys over HTTPS (JWKS) ----
mkdir -p "$work/j"
/usr/bin/python3 "$here/jwks_server.py" "$c/host.pem" "$c/host.key" "$work/j/jwks.json" "$work/jwks.port" 2>"$work/jwks.log" &
jwks_pid=$!; pids+=($jwks_pid)
for _ in $(seq 100); do [ -s "$work/jwks.port" ] && break; sleep 0.05; done
jiss="https://127.0.0.1:$(cat "$work/jwks.port")/"
/usr/bin/python3 "$here/make_credentials.py" --jwks "$work/j" "$jiss" || fail "make_credentials.py --jwks"
{ issuer "$jiss"; printf 'https_ca_file = "%s"\n' "$c/ca.pem"; } > "$work/jwks.toml"
start j --config "$work/jwks.toml" --metrics-listen 127.0.0.1:0 --metrics-per-identity
ok jwks-ec px put "$c/ca.pem" "$(url tokens/in/j.pem "$port_j")" --token-file "$work/j/jwks-tok-ec.jwt"
ok jwks-rsa px stat "$(url tokens/readme.txt "$port_j")" --token-file "$work/j/jwks-tok-rsa.jwt"
grep -qF "keys from ${jiss}jwks.json" "$work/j.log" || fail "no log line of the JWKS fetch: $(cat "$work/j.log")"
refused jwks-other-key "signature does not verify" px stat "$(url tokens/readme.txt "$port_j")" --token-file "$work/j/jwks-tok-other-key.jwt"
refused jwks-new-kid "signature does not verify" px stat "$(url tokens/readme.txt "$port_j")" --token-file "$work/j/jwks-tok-new-kid.jwt"
# An unknown kid fetches again at most once a minute: one JWKS fetch so far, made-up kids or not.
[ "$(grep -c 'GET /jwks.json' "$work/jwks.log")" -eq 1 ] || fail "JWKS fetched $(grep -c 'GET /jwks.json' "$work/jwks.log") times, not once"
ok jwks-long-subject px put "$c/ca.pem" "$(url tokens/in/long.pem "$port_j")" --token-file "$work/j/jwks-tok-long-sub.jwt"
# --metrics-per-identity: the subject as a label, a long one bounded (start + ~hash).
maddr=$(grep -o 'metrics on http://[^ ]*' "$work/j.log" | head -1 | cut -d' ' -f3)
curl -s "$maddr" > "$work/metrics" || fail "scrape $maddr"
grep -qF "identity=\"token:jwks-user@$jiss\",direction=\"put\"" "$work/metrics" ||
  fail "metrics do not name token:jwks-user: $(grep by_identity "$work/metrics")"
long=$(grep -o 'identity="token:a-subject[^"]*"' "$work/metrics" | head -1)
[ -n "$long" ] && [ ${#long} -le $((128 + 11)) ] && [[ $long == *~????????\" ]] || fail "long identity label not bounded: '$long'"
# The JWKS's server certificate must verify: without https_ca_file the system store lacks the test CA.
issuer "$jiss" > "$work/jwks-system.toml"
start js --config "$work/jwks-system.toml"
refused jwks-untrusted-ca "could not be fetched" px stat "$(url tokens/readme.txt "$port_js")" --token-file "$work/j/jwks-tok-ec.jwt"
grep -q "cannot fetch its keys: .*certificate does not verify" "$work/js.log" || fail "no log line of the unverified JWKS: $(cat "$work/js.log")"
# The issuer down: a fresh pxferd refuses its tokens, saying why in the log (fail-closed).
kill "$jwks_pid"; wait "$jwks_pid" 2>/dev/null
start jd --config "$work/jwks.toml"
refused jwks-issuer-down "could not be fetched" px stat "$(url tokens/readme.txt "$port_jd")" --token-file "$work/j/jwks-tok-ec.jwt"
grep -q "token issuer $jiss: cannot fetch its keys: GET ${jiss}.well-known/openid-configuration: .*refused" "$work/jd.log" ||
  fail "no log line saying why the keys are missing: $(cat "$work/jd.log")"

if [ $failures -ne 0 ]; then for l in "$work"/*.log; do echo "--- $l"; tail -15 "$l"; done; exit 1; fi
echo "grid_issuers_test: all passed"
