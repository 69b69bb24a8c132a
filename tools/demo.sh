#!/usr/bin/env bash
# The main job, end to end on loopback: builds pxfer (Release), starts pxferd on a free port of
# 127.0.0.1 serving a temporary export directory, makes a 1 GiB file, puts it and gets it back
# with 4 streams, shows the rate lines and the checksums, and stops the server.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build_dir="${PXFER_BUILD_DIR:-$here/build}"
size="${PXFER_DEMO_SIZE:-1G}"
streams="${PXFER_DEMO_STREAMS:-4}"

# The first build compiles everything (about 8 minutes on 2 cores, less with more); later runs
# take seconds. It says so, and shows ninja's progress every 15 s, so that it does not look hung.
build_log="$(mktemp "${TMPDIR:-/tmp}/pxfer-demo-build.XXXXXX.log")"
echo "== building pxfer and pxferd (Release) in $build_dir: the first time takes about 8 minutes on 2 cores,"
echo "   later runs seconds; installs missing Debian packages first (tools/deps.sh); log: $build_log"
"$here/tools/build.sh" "$build_dir" Release pxfer-cli pxferd > "$build_log" 2>&1 &
build_pid=$!
started=$SECONDS
while kill -0 "$build_pid" 2> /dev/null; do
  sleep 1
  if (((SECONDS - started) % 15 == 0)) && kill -0 "$build_pid" 2> /dev/null; then
    step="$(grep -o '^\[[0-9]*/[0-9]*\]' "$build_log" | tail -1 || true)"
    echo "   still building after $((SECONDS - started)) s ${step:+(ninja step $step)}"
  fi
done
if ! wait "$build_pid"; then
  echo "demo: the build failed; the end of $build_log:" >&2
  tail -20 "$build_log" >&2
  exit 1
fi
echo "   built in $((SECONDS - started)) s"
rm -f "$build_log"
bin="$build_dir/bin"

# Work in memory when there is room, so the demo shows the network path, not the disk.
base=/tmp
if [ -d /dev/shm ] && [ "$(df --output=avail -k /dev/shm | tail -1)" -gt $((3 * 1024 * 1024)) ]; then base=/dev/shm; fi
work="$(mktemp -d "$base/pxfer-demo.XXXXXX")"
server_pid=""
cleanup() {
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
mkdir -p "$work/export" "$work/client"

echo "== making a $size test file in $work/client"
head -c "$size" /dev/urandom > "$work/client/demo.bin"

echo "== credentials: a client token for identity 'demo' and the server's self-signed certificate"
# The token is printed once, straight into a file only we can read; the client reads it from there.
(umask 077 && "$bin/pxferd" token create demo --tokens "$work/tokens" > "$work/demo.token" 2>/dev/null)
fingerprint="$("$bin/pxferd" fingerprint --state-dir "$work/state")"
echo "server certificate $fingerprint (pinned with --fingerprint below; pxfer would also pin it on first use)"

echo "== starting pxferd on 127.0.0.1 (free port), export root $work/export"
"$bin/pxferd" --root "$work/export" --listen 127.0.0.1:0 --tokens "$work/tokens" --state-dir "$work/state" \
  --port-file "$work/port" 2> "$work/pxferd.log" &
server_pid=$!
for _ in $(seq 100); do [ -s "$work/port" ] && break; sleep 0.05; done
port="$(cat "$work/port")"
url="pxfer://127.0.0.1:$port/demo.bin"

echo
auth=(--token-file "$work/demo.token" --fingerprint "$fingerprint")
echo "== pxfer put -p $streams --token-file demo.token --fingerprint ${fingerprint:0:20}... $work/client/demo.bin $url"
"$bin/pxfer" put -p "$streams" "${auth[@]}" "$work/client/demo.bin" "$url" | tee "$work/put.out"
echo
echo "== pxfer get -p $streams --token-file demo.token --fingerprint ${fingerprint:0:20}... $url $work/client/fetched.bin"
"$bin/pxfer" get -p "$streams" "${auth[@]}" "$url" "$work/client/fetched.bin" | tee "$work/get.out"

echo
echo "== checksums"
put_sum="$(grep -E '^adler32: ' "$work/put.out")"
get_sum="$(grep -E '^adler32: ' "$work/get.out")"
echo "put:  $put_sum"
echo "get:  $get_sum"
sha256sum "$work/client/demo.bin" "$work/export/demo.bin" "$work/client/fetched.bin" | sed "s|$work/||"
echo
echo "== pxferd log"
cat "$work/pxferd.log"
if [ "$put_sum" = "$get_sum" ] && cmp -s "$work/client/demo.bin" "$work/client/fetched.bin"; then
  echo "demo: OK, checksums match and the fetched file is identical"
else
  echo "demo: FAILED, checksums differ" >&2
  exit 1
fi
