# Shared set-up of the gfal2 endpoint tests (sourced, not run): the plugin and the file plugin in a
# private GFAL_PLUGIN_DIR, a scratch work folder removed at exit, pxferd servers started on
# ephemeral ports, and the check/run helpers. Needs $1 = BUILD_DIR of the sourcing script.
set -euo pipefail
build=$(cd "${1:?usage: $0 BUILD_DIR}" && pwd)
bin=$build/bin
plugin=$build/lib/gfal2-plugins/libgfal_plugin_pxfer.so
file_plugin=/usr/lib/x86_64-linux-gnu/gfal2-plugins/libgfal_plugin_file.so
for need in "$plugin" "$file_plugin" "$bin/pxferd"; do
  [ -e "$need" ] || { echo "$0: $need is missing (build with libgfal2-dev; tools/deps.sh installs it)" >&2; exit 1; }
done

work=$(mktemp -d /tmp/pxfer-gfal.XXXXXX)
server_pids=()
cleanup() {
  local pid
  for pid in "${server_pids[@]}"; do kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null; done
  if [ -n "${PXFER_KEEP_WORK:-}" ]; then echo "$0: kept $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT
mkdir -p "$work"/{local,plugins,conf,home,state}
export HOME=$work/home XDG_CONFIG_HOME=$work/home/.config XDG_STATE_HOME=$work/state
# The gfal-* scripts must run the system Python that has the gfal2 module; gfal2 loads only the
# plugins and configuration named here (ours and the file plugin beside it).
export GFAL_PYTHONBIN=/usr/bin/python3 GFAL_PLUGIN_DIR=$work/plugins GFAL_CONFIG_DIR=$work/conf
ln -s "$plugin" "$file_plugin" "$work/plugins/"
[ -f /etc/gfal2.d/gfal2_core.conf ] && cp /etc/gfal2.d/gfal2_core.conf "$work/conf/"
umask 077

failures=0
pass() { echo "ok   - $*"; }
fail() { echo "FAIL - $*"; failures=$((failures + 1)); }
check() { local what=$1; shift; if "$@"; then pass "$what"; else fail "$what"; fi; }
# Runs a command, records its exit status in $rc and its output in $out (stdout and stderr).
run() { set +e; out=$("$@" 2>&1); rc=$?; set -e; }
finish() { echo "$0: $failures failure(s)"; [ "$failures" -eq 0 ]; }

# make_token NAME IDENTITY: a tokens file $work/NAME.tokens holding one token for IDENTITY, the
# token itself in $work/NAME.token.
make_token() {
  "$bin/pxferd" token create "$2" --tokens "$work/$1.tokens" | head -1 > "$work/$1.token"
}

# start_server NAME TOKENS_NAME [pxferd options...]: pxferd serving $work/NAME.root with the
# tokens of make_token TOKENS_NAME; sets port_NAME and base_NAME (its pxfer:// URL), log in
# $work/NAME.log. Every server shares one state folder, hence one certificate (one FINGERPRINT).
start_server() {
  local name=$1 tokens=$2
  shift 2
  mkdir -p "$work/$name.root"
  "$bin/pxferd" --root "$work/$name.root" --listen 127.0.0.1:0 --port-file "$work/$name.port" \
    --tokens "$work/$tokens.tokens" --state-dir "$work/state/pxferd" "$@" 2> "$work/$name.log" &
  server_pids+=($!)
  for _ in $(seq 100); do [ -s "$work/$name.port" ] && break; sleep 0.1; done
  [ -s "$work/$name.port" ] || { echo "$0: pxferd $name did not start:"; cat "$work/$name.log"; exit 1; }
  printf -v "port_$name" '%s' "$(cat "$work/$name.port")"
  printf -v "base_$name" 'pxfer://127.0.0.1:%s' "$(cat "$work/$name.port")"
}

# write_conf TOKENS_NAME: the [PXFER] configuration pinning the servers' certificate, with the
# token of make_token TOKENS_NAME as TOKEN_FILE. Call after the first start_server.
write_conf() {
  local fingerprint
  fingerprint=$(grep -ho 'sha256:[0-9a-f]\{64\}' "$work"/*.log | head -1)
  cat > "$work/conf/pxfer_plugin.conf" <<CONF
[PXFER]
TOKEN_FILE=$work/$1.token
FINGERPRINT=$fingerprint
CONNECT_TIMEOUT=5
PERF_INTERVAL_MS=200
CONF
}
