# Sourced by the gfal2 plugin tests (tests/grid/gfal_*.sh) with BUILD_DIR: checks that the plugin,
# the file plugin and the gfal-* clients are there, starts a pxferd with a token (the identity
# "writer") on loopback in a fresh $work, points gfal2 at our plugin and a [PXFER] configuration
# that pins that server, and defines pass/fail/check/run. Leaves $work, $bin, $port, $base,
# $server_pid and $failures; the EXIT trap stops the server and removes $work.
build=$(cd "$1" && pwd)
bin=$build/bin
plugin=$build/lib/gfal2-plugins/libgfal_plugin_pxfer.so
file_plugin=/usr/lib/x86_64-linux-gnu/gfal2-plugins/libgfal_plugin_file.so
for need in "$plugin" "$file_plugin" "$bin/pxferd"; do
  [ -e "$need" ] || { echo "gfal_test: $need is missing (build with libgfal2-dev; tools/deps.sh installs it)" >&2; exit 1; }
done
for tool in gfal-copy gfal-ls gfal-stat gfal-mkdir gfal-rm gfal-sum; do
  command -v "$tool" >/dev/null || { echo "gfal_test: $tool is missing (tools/deps.sh installs gfal2-util-scripts)" >&2; exit 1; }
done

work=$(mktemp -d /tmp/pxfer-gfal.XXXXXX)
server_pid=""
cleanup() {
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
mkdir -p "$work"/{root,local,plugins,conf,home,state}
export HOME=$work/home XDG_CONFIG_HOME=$work/home/.config XDG_STATE_HOME=$work/state
# The gfal-* scripts must run the system Python that has the gfal2 module; gfal2 loads only the
# plugins and configuration named here (ours and the file plugin beside it).
export GFAL_PYTHONBIN=/usr/bin/python3 GFAL_PLUGIN_DIR=$work/plugins GFAL_CONFIG_DIR=$work/conf
ln -s "$plugin" "$file_plugin" "$work/plugins/"
[ -f /etc/gfal2.d/gfal2_core.conf ] && cp /etc/gfal2.d/gfal2_core.conf "$work/conf/"

failures=0
pass() { echo "ok   - $*"; }
fail() { echo "FAIL - $*"; failures=$((failures + 1)); }
check() { local what=$1; shift; if "$@"; then pass "$what"; else fail "$what"; fi; }
# Runs a command, records its exit status in $rc and its output in $out (stdout and stderr).
run() { set +e; out=$("$@" 2>&1); rc=$?; set -e; }

umask 077
"$bin/pxferd" token create writer --tokens "$work/tokens" | head -1 > "$work/writer.token"
printf '%064d\n' 7 > "$work/wrong.token"
"$bin/pxferd" --root "$work/root" --listen 127.0.0.1:0 --port-file "$work/port" --tokens "$work/tokens" \
  --state-dir "$work/state/pxferd" 2> "$work/pxferd.log" &
server_pid=$!
for _ in $(seq 100); do [ -s "$work/port" ] && break; sleep 0.1; done
[ -s "$work/port" ] || { echo "gfal_test: pxferd did not start:"; cat "$work/pxferd.log"; exit 1; }
port=$(cat "$work/port")
fingerprint=$(grep -o 'sha256:[0-9a-f]\{64\}' "$work/pxferd.log" | head -1)
cat > "$work/conf/pxfer_plugin.conf" <<CONF
[PXFER]
TOKEN_FILE=$work/writer.token
FINGERPRINT=$fingerprint
CONNECT_TIMEOUT=5
PERF_INTERVAL_MS=200
CONF
base=pxfer://127.0.0.1:$port
