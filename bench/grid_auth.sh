#!/usr/bin/env bash
# Control-connection set-up with grid credentials against pxfer's own token (docs/grid.md,
# "Cost of the grid checks"): median wall time of `pxfer stat` (process start, TCP, TLS 1.3,
# HELLO, AUTH, one STAT) over N runs each, interleaved round by round, against one pxferd that
# accepts all three: a pxfer token (--tokens), an RFC 3820 proxy chain (--x509, CRL present) and a
# WLCG JWT (ES256, --token-issuers). The difference to the token row is what the check costs.
#   bench/grid_auth.sh [RUNS]      (build first: /work/hbuild.sh pxferd pxfer-cli, or PXFER_BUILD_DIR)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
runs="${1:-30}"
bin="${PXFER_BUILD_DIR:-$here/build}/bin"
work="$(mktemp -d /tmp/pxfer-grid-bench.XXXXXX)"
trap 'kill $spid 2>/dev/null || true; rm -rf "$work"' EXIT
/usr/bin/python3 "$here/tests/grid/make_credentials.py" "$work/c"
c="$work/c"
mkdir -p "$work/root/tokens" && echo x > "$work/root/tokens/f"
"$bin/pxferd" token create bench --tokens "$work/tokens" > "$work/own.token"
chmod 600 "$work/own.token"
printf '"/DC=org/DC=pxfer-test/OU=Users/CN=Jane Doe" / rw\nbench / rw\n' > "$work/access"; chmod 600 "$work/access"
export PXFER_KNOWN_HOSTS="$work/known_hosts"
"$bin/pxferd" --root "$work/root" --listen 127.0.0.1:0 --port-file "$work/port" --tokens "$work/tokens" \
  --access "$work/access" --x509 --x509-ca-dir "$c/certificates" --voms-dir "$c/vomsdir" \
  --token-issuers "$c/token-issuers.toml" --cert "$c/host.pem" --key "$c/host.key" 2>"$work/log" & spid=$!
for _ in $(seq 100); do [ -s "$work/port" ] && break; sleep 0.05; done
url="pxfer://127.0.0.1:$(cat "$work/port")/tokens/f"
"$bin/pxfer" stat "$url" --token-file "$work/own.token" >/dev/null  # pins the certificate
ms() { local t0 t1; t0=$(date +%s%N); "$@" >/dev/null; t1=$(date +%s%N); echo $(( (t1 - t0) / 1000 )); }
: > "$work/token.us"; : > "$work/proxy.us"; : > "$work/jwt.us"
for _ in $(seq "$runs"); do
  ms "$bin/pxfer" stat "$url" --token-file "$work/own.token" >> "$work/token.us"
  ms "$bin/pxfer" stat "$url" --cert "$c/proxy2.pem" --key "$c/proxy2.pem" >> "$work/proxy.us"
  ms "$bin/pxfer" stat "$url" --token-file "$c/tok-rw.jwt" >> "$work/jwt.us"
done
median() { sort -n "$1" | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
base=$(median "$work/token.us")
printf '| credential | median ms (n=%s) | vs pxfer token |\n|---|---|---|\n' "$runs"
for k in token proxy jwt; do
  m=$(median "$work/$k.us")
  name=$([ $k = token ] && echo "pxfer token" || ([ $k = proxy ] && echo "proxy of a proxy (X.509, CRL)" || echo "WLCG JWT (ES256)"))
  printf '| %s | %.2f | %+.2f ms |\n' "$name" "$(echo "$m/1000" | bc -l)" "$(echo "($m-$base)/1000" | bc -l)"
done
