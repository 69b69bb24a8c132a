#!/usr/bin/env bash
# Makes docs/report-example.svg (shown in docs/guide.md) and a whole example page: starts pxferd on a
# free loopback port, puts a file with -w 87380 and gets it back with -w 1M (4 streams, --json),
# renders both runs with `pxfer report`, and cuts the rate-over-time chart out of the page.
#   tools/report_example.sh [OUT_DIR]   (default: docs/; the page goes to OUT_DIR/report-example.html
#                                        only when PXFER_KEEP_PAGE=1)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build_dir="${PXFER_BUILD_DIR:-$here/build}"
out_dir="${1:-$here/docs}"
size="${PXFER_EXAMPLE_SIZE:-512M}"
bin="$build_dir/bin"
[[ -x $bin/pxfer && -x $bin/pxferd ]] || "$here/tools/build.sh" "$build_dir" Release pxfer-cli pxferd >/dev/null

base=/tmp
[[ -d /dev/shm ]] && base=/dev/shm
work="$(mktemp -d "$base/pxfer-report-example.XXXXXX")"
server_pid=""
cleanup() {
  [[ -n $server_pid ]] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
mkdir -p "$work/export" "$work/client"
head -c "$size" /dev/urandom >"$work/client/data.bin"
# Anonymous read-write on loopback only: an example, not a deployment.
"$bin/pxferd" --root "$work/export" --listen 127.0.0.1:0 --insecure-no-auth --state-dir "$work/state" \
  --port-file "$work/port" 2>"$work/pxferd.log" &
server_pid=$!
for _ in $(seq 100); do [[ -s $work/port ]] && break; sleep 0.05; done
url="pxfer://127.0.0.1:$(cat "$work/port")/data.bin"
export PXFER_KNOWN_HOSTS="$work/known_hosts"
common=(-p 4 --perf-interval 0.1 --json)
"$bin/pxfer" put "${common[@]}" -w 87380 "$work/client/data.bin" "$url" >"$work/put.ndjson" 2>/dev/null
"$bin/pxfer" get "${common[@]}" -w 1M "$url" "$work/client/back.bin" >"$work/get.ndjson"
"$bin/pxfer" report "$work/put.ndjson" "$work/get.ndjson" --title "pxfer report example" -o "$work/page.html"
mkdir -p "$out_dir"
# The first chart of the page is the aggregate rate over time.
python3 - "$work/page.html" "$out_dir/report-example.svg" <<'PY'
import sys
page = open(sys.argv[1], encoding="utf-8").read()
start = page.index("<svg")
end = page.index("</svg>", start) + len("</svg>")
open(sys.argv[2], "w", encoding="utf-8").write(page[start:end] + "\n")
PY
[[ ${PXFER_KEEP_PAGE:-0} == 1 ]] && cp "$work/page.html" "$out_dir/report-example.html"
echo "wrote $out_dir/report-example.svg"
