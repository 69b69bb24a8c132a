#!/usr/bin/env bash
# bench/perf/small_get_clients.sh A_BIN B_BIN [ROUNDS]: get -r -c 8 of 20 x 500 x 64 KiB (the layout of
# bench/compare.sh) with each build's pxfer in turn against one pxferd (B's, --insecure-no-auth),
# rounds interleaved; prints wall and the client's CPU seconds (user + system) per run, then the
# medians (docs/performance.md section 25).
set -euo pipefail
a_bin="$1"; b_bin="$2"; rounds="${3:-12}"
w=$(mktemp -d /dev/shm/pxfer-sgc.XXXXXX); sp=""; trap '[ -n "$sp" ] && kill $sp 2>/dev/null; rm -rf "$w"' EXIT
python3 - "$w" <<'P'
import os, sys
w = sys.argv[1]
for i in range(10000):
    d = f"{w}/root/tree/{i // 500:03d}"; os.makedirs(d, exist_ok=True)
    with open(f"{d}/f{i:06d}", "wb") as f: f.write(os.urandom(65536))
P
export PXFER_KNOWN_HOSTS=$w/kh
"$b_bin/pxferd" --root "$w/root" --listen 127.0.0.1:0 --insecure-no-auth --state-dir "$w/st" --port-file "$w/port" 2>/dev/null & sp=$!
for _ in $(seq 100); do [ -s "$w/port" ] && break; sleep 0.05; done
u=pxfer://127.0.0.1:$(cat "$w/port")
"$b_bin/pxfer" get -q -r -c 8 "$u/tree" "$w/out/t" 2>/dev/null; rm -rf "$w/out"
for r in $(seq "$rounds"); do for side in a b; do
  bin_var="${side}_bin"
  x=$( { /usr/bin/time -f "%e %U %S" "${!bin_var}/pxfer" get -q -r -c 8 "$u/tree" "$w/out/t" ; } 2>&1 | tail -1)
  echo "$r $side $x"; rm -rf "$w/out"
done; done | tee "$w/runs"
python3 - "$w/runs" <<'P'
import statistics as st, sys
rows = [l.split() for l in open(sys.argv[1])]
for side in "ab":
    r = [x for x in rows if x[1] == side]
    print(f"{side}: wall median {st.median(float(x[2]) for x in r):.3f} s, client CPU median "
          f"{st.median(float(x[3]) + float(x[4]) for x in r):.3f} s over {len(r)} runs")
P
