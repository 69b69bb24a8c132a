#!/usr/bin/env bash
# Reproduces the grid sites' findings (docs/experiments.md) over an emulated WAN link:
#
#   sudo bench/experiments.sh [a|b|c|d|e|f|all] [--quick]
#
#   a  streams under loss: 50 ms RTT, 0.01 % loss, 1 Gbit/s; 1-16 streams; reno, cubic, bbr   (~7 min, quick ~2)
#   b  TCP buffers: 90 ms RTT, 1 Gbit/s; -w 87380 / -w 1M / autotuning; 1 and 9 streams      (~3 min, quick ~1.5)
#   c  compression: 40 ms RTT, 100 Mbit/s; random and text data; --compress none/zstd/auto    (~1.5 min, quick ~1)
#   d  put/get asymmetry: 20 ms RTT, 200/200 and 200/50 Mbit/s                                (~3 min, quick ~1)
#   e  files x streams matrix (pxfer sweep) on the (a) link; no ramp-up                      (~5 min, quick ~1)
#   f  ramp-up vs all at once: 30 files, pxferd --max-active 10 and a 40 MB/s emulated disk   (~2 min, quick ~1)
#      (c and e print "skipped" with a build of pxfer that lacks --compress / sweep)
#
# Each experiment brings up `pxfer-wanem up --name pxlab` (namespaces pxlab-a = 10.77.0.1, the
# client, and pxlab-b = 10.77.0.2, pxferd), runs `pxfer --json` inside pxlab-a, prints markdown
# tables on stdout (progress on stderr) and tears the link down, also on error or Ctrl-C.
# No packet leaves the two namespaces. Data files live in /dev/shm (sparse, except in c).
#
# Needs root, /dev/net/tun, iproute2, python3. Environment:
#   PXFER_BUILD_DIR  build directory (default: build/ of this checkout; built if a binary is missing)
#   PXLAB_REPS       repetitions of every run in a and b (default 1; the tables show the median)
#   PXLAB_SEED       loss generator seed (default 42)
#   PXLAB_KEEP=1     keep the raw NDJSON of every run (the directory is printed at the end)
#   PXLAB_REPORTS    where each experiment's HTML page (`pxfer report` of all its runs, overlaid)
#                    is written: experiment-a.html ... (default ./pxlab-reports)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
prog="bench/experiments.sh"

usage() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "${BASH_SOURCE[0]}"; }

which=""
quick=0
for arg in "$@"; do
  case $arg in
    a | b | c | d | e | f | all) which="$which $arg" ;;
    --quick) quick=1 ;;
    -h | --help) usage; exit 0 ;;
    *) echo "$prog: unknown argument '$arg' (expected a, b, c, d, e, f, all or --quick)" >&2; exit 2 ;;
  esac
done
[[ -n $which ]] || which=all
[[ $which == *all* ]] && which="a b c d e f"

if [[ $(id -u) -ne 0 ]]; then
  echo "$prog: needs root: it creates network namespaces and TUN devices (pxfer-wanem). Run: sudo $prog $*" >&2
  exit 1
fi
[[ -c /dev/net/tun ]] || { echo "$prog: /dev/net/tun is missing: load the tun module (modprobe tun)" >&2; exit 1; }
for tool in ip python3 flock timeout truncate; do
  command -v "$tool" >/dev/null || { echo "$prog: needs '$tool' (tools/deps.sh installs what is missing)" >&2; exit 1; }
done

build_dir="${PXFER_BUILD_DIR:-$here/build}"
# shellcheck source=bench/lab/lib.sh
source "$here/bench/lab/lib.sh"
if [[ ! -x $build_dir/bin/pxfer || ! -x $build_dir/bin/pxferd ]] || ! lab_find_wanem "$build_dir" >/dev/null; then
  echo "$prog: building pxfer-cli pxferd pxfer-wanem in $build_dir" >&2
  "$here/tools/build.sh" "$build_dir" Release pxfer-cli pxferd pxfer-wanem >&2
fi
LAB_PXFER="$build_dir/bin/pxfer"
LAB_PXFERD="$build_dir/bin/pxferd"
LAB_WANEM="$(lab_find_wanem "$build_dir")"
LAB_NAME=pxlab
reps="${PXLAB_REPS:-1}"
seed="${PXLAB_SEED:-42}"
keep="${PXLAB_KEEP:-0}"

LAB_WORK="$(mktemp -d /dev/shm/pxlab.XXXXXX)"
finish() {
  lab_cleanup
  if [[ $keep == 1 ]]; then
    find "$LAB_WORK" -name '*.bin' -delete 2>/dev/null || true
    find "$LAB_WORK" -name '.*.pxfer-*' -delete 2>/dev/null || true
    rm -rf "${LAB_WORK:?}/bin"
    echo "raw results kept in $LAB_WORK" >&2
  else
    rm -rf "$LAB_WORK"
  fi
}
trap finish EXIT
trap 'exit 130' INT TERM HUP
lab_lock /tmp/pxfer-lab.lock 900 || { echo "$prog: another lab run still holds /tmp/pxfer-lab.lock" >&2; exit 1; }
mkdir -p "$LAB_WORK/srv" "$LAB_WORK/cli" "$LAB_WORK/runs" "$LAB_WORK/bin"
# Private copies: a rebuild of build/ while the experiments run must not change the binaries
# half way (or pair a new pxfer with an old pxferd).
cp "$LAB_PXFER" "$LAB_PXFERD" "$LAB_WANEM" "$LAB_WORK/bin/"
snapshot="$(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo unknown)$(git -C "$here" diff --quiet HEAD -- src include tools 2>/dev/null || echo ' + uncommitted changes in the tree'), binaries copied from $build_dir at $(date -u '+%H:%M') UTC (pxfer built $(date -u -r "$LAB_PXFER" '+%Y-%m-%d %H:%M UTC'))"
LAB_PXFER="$LAB_WORK/bin/pxfer"
LAB_PXFERD="$LAB_WORK/bin/pxferd"
LAB_WANEM="$LAB_WORK/bin/pxfer-wanem"

# ---------------------------------------------------------------------------------------------
# helpers

# link_up ARGS...: clears leftovers of a killed run, starts the link and pxferd, and sets the
# sysctls every experiment wants: no cached route metrics (a lossy run would otherwise hand its
# ssthresh to the next connection) and large TCP autotuning limits unless the experiment says else.
link_up() {
  "$LAB_WANEM" down --name "$LAB_NAME" >/dev/null 2>&1 || true
  lab_log "link: pxfer-wanem up --name $LAB_NAME $* --seed $seed"
  lab_link_up --seed "$seed" "$@"
  lab_sysctl_both net.ipv4.tcp_no_metrics_save=1 \
    net.ipv4.tcp_rmem="4096 131072 33554432" net.ipv4.tcp_wmem="4096 16384 33554432"
  lab_server_start
}

link_down() {
  lab_server_stop
  lab_link_down
  echo
  lab_counters
}

# mbit_goodput RATE_MBIT: the most TCP payload a link of that rate carries, in MB/s (MTU 1500:
# 1448 payload bytes per 1500 IP bytes; the emulator's rate counts IP bytes).
mbit_goodput() { awk -v r="$1" 'BEGIN { printf "%.1f", r * 1e6 / 8 * 1448 / 1500 / 1e6 }'; }

median() { tr ' ' '\n' | awk '$1 != "" && $1 != "-"' | sort -g | awk '{ v[NR] = $1 } END {
  if (NR == 0) { print "-"; exit } if (NR % 2) print v[(NR + 1) / 2]; else printf "%.2f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "-" || b == "-" || b + 0 == 0) print "-"; else printf "%.2f", a / b }'; }

# run_one ID LIMIT WARMUP ARGS...: one pxfer run; prints its figures line
#   state avg steady seconds busy streams retrans sndbuf error busy_pct emulator_pct
run_one() {
  local id=$1 limit=$2 warmup=$3; shift 3
  local out="$LAB_WORK/runs/$id.ndjson" rc figures cpu
  rc=$(lab_pxfer "$limit" "$out" "$@")
  figures=$(lab_summary "$out" --warmup "$warmup")
  cpu=$(cat "$out.cpu")
  if [[ $rc != 0 && $rc != 124 && $figures != error* ]]; then
    figures="error 0 - 0 - - - - exit_status_$rc:_$(head -c 200 "$out.err" | tr ' \n' '__')"
  fi
  echo "$figures $cpu"
}

machine_line() {
  echo "machine: $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')), kernel $(uname -r), load average $(cut -d' ' -f1-3 /proc/loadavg), $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo "pxfer: $snapshot"
}

# ---------------------------------------------------------------------------------------------
# (a) streams under loss

exp_a() {
  local delay=25 loss=0.01 rate_mbit=1000 mss=1448
  local streams_list=(1 2 4 8 16) ccs=(reno cubic bbr) limit=25 warmup=5 size=2G
  if [[ $quick == 1 ]]; then streams_list=(1 8); limit=12; warmup=3; size=1G; fi
  echo
  echo "## (a) streams under loss"
  echo
  echo "link: ${delay} ms each way (RTT $((2 * delay)) ms), ${loss} % random loss each way, ${rate_mbit} Mbit/s, MTU 1500, default queue (1 BDP); seed $seed"
  echo "sysctls (both namespaces): tcp_rmem/tcp_wmem max 32 MiB, tcp_no_metrics_save=1; pxfer get -w 0 (autotuning) --congestion CC --stream-stats"
  echo "each run: a ${size} sparse file, stopped after ${limit} s if not done; steady = rate after the first ${warmup} s; repetitions: $reps"
  machine_line
  link_up --delay "$delay" --loss "${loss}%" --rate "${rate_mbit}mbit"
  truncate -s "$size" "$LAB_WORK/srv/a.bin"
  local -A steady avg
  local details="" rep cc n figures f
  for rep in $(seq "$reps"); do
    for cc in "${ccs[@]}"; do
      for n in "${streams_list[@]}"; do
        lab_log "(a) rep $rep: $cc, $n streams"
        rm -rf "$LAB_WORK/cli/a"; mkdir -p "$LAB_WORK/cli/a"
        figures=$(run_one "a-$cc-$n-$rep" "$limit" "$warmup" get -p "$n" --congestion "$cc" --stream-stats \
          "$(lab_url a.bin)" "$LAB_WORK/cli/a/")
        rm -rf "$LAB_WORK/cli/a"
        read -r -a f <<<"$figures"
        steady[$cc,$n]="${steady[$cc,$n]:-} ${f[2]}"
        avg[$cc,$n]="${avg[$cc,$n]:-} ${f[1]}"
        details+="| $cc | $n | $rep | ${f[0]} | ${f[3]} | ${f[1]} | ${f[2]} | ${f[6]} | ${f[11]}/${f[12]} | ${f[9]} | ${f[10]} |${f[8]/#-/}"$'\n'
        sleep 1
      done
    done
  done
  link_down

  local mathis cap
  mathis=$(awk -v m="$mss" -v rtt="$((2 * delay))" -v p="$loss" 'BEGIN { printf "%.2f", m / (rtt / 1000 * sqrt(p / 100)) / 1e6 }')
  cap=$(mbit_goodput "$rate_mbit")
  echo
  echo "Steady rate, MB/s (10^6 bytes/s; median of $reps), after the first ${warmup} s of each run:"
  echo
  local head="| cc |" sep="| --- |"
  for n in "${streams_list[@]}"; do head+=" $n |"; sep+=" --- |"; done
  echo "$head 8 / 1 |"
  echo "$sep --- |"
  for cc in "${ccs[@]}"; do
    local row="| $cc |"
    for n in "${streams_list[@]}"; do row+=" $(median <<<"${steady[$cc,$n]}") |"; done
    echo "$row $(ratio "$(median <<<"${steady[$cc,8]:-}")" "$(median <<<"${steady[$cc,1]:-}")") |"
  done
  local row="| Mathis, MSS/(RTT·√p), capped at the link |"
  for n in "${streams_list[@]}"; do row+=" $(awk -v m="$mathis" -v n="$n" -v c="$cap" 'BEGIN { v = m * n; printf "%.1f", (v < c ? v : c) }') |"; done
  echo "$row $(awk -v m="$mathis" -v c="$cap" 'BEGIN { v = 8 * m; printf "%.2f", (v < c ? v : c) / m }') |"
  echo
  echo "Mathis estimate: ${mss} B / ($((2 * delay)) ms · √(${loss} %)) = ${mathis} MB/s per stream (constant C = 1; C = √(3/2) gives 1.22×); link goodput ceiling ${cap} MB/s."
  echo
  echo "Whole-run average, MB/s (slow start included; what the user sees for a transfer of this length):"
  echo
  echo "$head"
  echo "$sep"
  for cc in "${ccs[@]}"; do
    row="| $cc |"
    for n in "${streams_list[@]}"; do row+=" $(median <<<"${avg[$cc,$n]}") |"; done
    echo "$row"
  done
  echo
  echo "Every run (state: done = whole file moved, cut = stopped at ${limit} s; retransmits: the sending side's total;"
  echo "wan0 drops: packets the sending kernel dropped at its TUN device (emulator too slow to read them; not in its counters);"
  echo "CPU: machine busy % of all $(nproc) cores, emulator % of one core (two forwarding threads: up to 200)):"
  echo
  echo "| cc | streams | rep | state | s | avg MB/s | steady MB/s | retransmits | wan0 drops a/b | machine busy % | emulator CPU % | note"
  echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
  printf '%s' "$details"
}

# ---------------------------------------------------------------------------------------------
# (b) buffers

exp_b() {
  local delay=45 rate_mbit=1000 limit=20 warmup=3 size=2G
  if [[ $quick == 1 ]]; then limit=10; warmup=2; size=1G; fi
  local fasterdata_r="4096 87380 16777216" fasterdata_w="4096 65536 16777216"
  local liverpool="8192 1048576 8388608"
  # case: label | -w | tcp_rmem | tcp_wmem
  local cases=(
    "pinned -w 87380|87380|$fasterdata_r|$fasterdata_w"
    "pinned -w 1M|1M|$fasterdata_r|$fasterdata_w"
    "autotuning -w 0, fasterdata sysctls|0|$fasterdata_r|$fasterdata_w"
    "autotuning -w 0, Liverpool sysctls|0|$liverpool|$liverpool"
  )
  echo
  echo "## (b) TCP buffers"
  echo
  echo "link: ${delay} ms each way (RTT $((2 * delay)) ms), ${rate_mbit} Mbit/s, no loss, MTU 1500, default queue (1 BDP = $((rate_mbit * 2 * delay / 8 / 1000)) MB); seed $seed"
  echo "sysctls (both namespaces): tcp_no_metrics_save=1, and per row:"
  echo "  fasterdata: tcp_rmem=\"$fasterdata_r\" tcp_wmem=\"$fasterdata_w\"; Liverpool: tcp_rmem=tcp_wmem=\"$liverpool\""
  echo "pxfer put -p N -w SIZE --congestion cubic --stream-stats (the client sends, so the per-stream view is the local sending side)"
  echo "each run: a ${size} sparse file, stopped after ${limit} s if not done; steady = rate after the first ${warmup} s; repetitions: $reps"
  machine_line
  link_up --delay "$delay" --rate "${rate_mbit}mbit"
  echo "net.core.rmem_max / wmem_max in $LAB_NAME-a: $(ip netns exec "$LAB_NAME-a" sysctl -n net.core.rmem_max) / $(ip netns exec "$LAB_NAME-a" sysctl -n net.core.wmem_max) (read-only in a child namespace on this kernel: inherited from the root namespace; -w 1M fits)"
  truncate -s "$size" "$LAB_WORK/cli/b.bin"
  mkdir -p "$LAB_WORK/srv/in"
  local -A res busy buf
  local details="" rep c n label w rmem wmem figures f slow_id="" slow_rate=""
  for rep in $(seq "$reps"); do
    for c in "${cases[@]}"; do
      IFS='|' read -r label w rmem wmem <<<"$c"
      lab_sysctl_both net.ipv4.tcp_rmem="$rmem" net.ipv4.tcp_wmem="$wmem"
      for n in 1 9; do
        lab_log "(b) rep $rep: $label, $n streams"
        local id="b-$w-${rmem// /_}-$n-$rep"
        figures=$(run_one "$id" "$limit" "$warmup" put -p "$n" -w "$w" --congestion cubic --stream-stats \
          "$LAB_WORK/cli/b.bin" "$(lab_url in/b.bin)")
        sleep 1
        rm -rf "$LAB_WORK/srv/in"; mkdir -p "$LAB_WORK/srv/in"
        read -r -a f <<<"$figures"
        res[$label,$n]="${res[$label,$n]:-} ${f[2]}"
        busy[$label,$n]="${f[4]}"
        buf[$label,$n]="${f[7]}"
        details+="| $label | $n | $rep | ${f[0]} | ${f[3]} | ${f[1]} | ${f[2]} | ${f[4]} of ${f[5]} | ${f[7]} | ${f[6]} | ${f[11]}/${f[12]} | ${f[9]} | ${f[10]} |${f[8]/#-/}"$'\n'
        if [[ $n == 9 && ${f[2]} != - ]] && { [[ -z $slow_rate ]] || awk -v a="${f[2]}" -v b="$slow_rate" 'BEGIN { exit !(a < b) }'; }; then
          slow_rate=${f[2]}; slow_id=$id
        fi
      done
    done
  done
  link_down
  echo
  echo "Steady rate, MB/s (median of $reps), after the first ${warmup} s; busy = streams with Send-Q > 0 in at least half the intervals (pxfer --stream-stats):"
  echo
  echo "| buffers | -w / RTT | 1 stream | 9 streams | 9 / 1 | busy streams (of 9) | sndbuf at the end (9 streams) |"
  echo "| --- | --- | --- | --- | --- | --- | --- |"
  for c in "${cases[@]}"; do
    IFS='|' read -r label w rmem wmem <<<"$c"
    local est="-"
    [[ $w != 0 ]] && est=$(awk -v w="$w" -v rtt="$((2 * delay))" 'BEGIN { b = w; if (w ~ /M$/) b = w * 1048576; printf "%.2f MB/s per stream", b / (rtt / 1000) / 1e6 }')
    local one nine
    one=$(median <<<"${res[$label,1]}"); nine=$(median <<<"${res[$label,9]}")
    echo "| $label | $est | $one | $nine | $(ratio "$nine" "$one") | ${busy[$label,9]} | ${buf[$label,9]} |"
  done
  echo
  echo "Link goodput ceiling $(mbit_goodput "$rate_mbit") MB/s; bandwidth-delay product $((rate_mbit * 2 * delay / 8 / 1000)) MB."
  if [[ -n $slow_id ]]; then
    echo
    echo "Per-stream view of the slowest 9-stream run ($slow_id), one interval in the middle of the run:"
    echo
    echo '```'
    lab_summary "$LAB_WORK/runs/$slow_id.ndjson" --excerpt-at "$((limit / 2))"
    echo '```'
  fi
  echo
  echo "Every run (CPU: machine busy % of all $(nproc) cores, emulator % of one core (two forwarding threads: up to 200)):"
  echo
  echo "| buffers | streams | rep | state | s | avg MB/s | steady MB/s | busy | sndbuf (bytes) | retransmits | wan0 drops a/b | machine busy % | emulator CPU % | note"
  echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
  printf '%s' "$details"
}

# ---------------------------------------------------------------------------------------------
# (d) put/get asymmetry

exp_d() {
  local delay=10 streams=4 limit=60 d_reps=2
  local sym_size=512M asym_size=160M
  if [[ $quick == 1 ]]; then d_reps=1; sym_size=160M; asym_size=64M; fi
  echo
  echo "## (d) put / get asymmetry"
  echo
  echo "links: ${delay} ms each way (RTT $((2 * delay)) ms), no loss, MTU 1500, default queue; symmetric 200 Mbit/s both ways,"
  echo "then asymmetric 200 Mbit/s a->b (client to server: put) and 50 Mbit/s b->a (server to client: get); seed $seed"
  echo "pxfer put/get -p $streams -w 0 --congestion cubic; sysctls (both namespaces): tcp_rmem/tcp_wmem max 32 MiB, tcp_no_metrics_save=1"
  echo "files: $sym_size (symmetric) and $asym_size (asymmetric) sparse files; put and get alternate, $d_reps round(s); rate = pxfer's summary"
  machine_line
  local details="" link label size r dir figures f
  local -A rate
  for link in sym asym; do
    if [[ $link == sym ]]; then
      label="symmetric 200/200 Mbit/s"; size=$sym_size
      link_up --delay "$delay" --rate 200mbit
    else
      label="asymmetric 200/50 Mbit/s"; size=$asym_size
      link_up --delay "$delay" --rate-ab 200mbit --rate-ba 50mbit
    fi
    truncate -s "$size" "$LAB_WORK/cli/d.bin"
    truncate -s "$size" "$LAB_WORK/srv/d.bin"
    mkdir -p "$LAB_WORK/srv/in" "$LAB_WORK/cli/back"
    for r in $(seq "$d_reps"); do
      for dir in put get; do
        lab_log "(d) $label: $dir, round $r"
        if [[ $dir == put ]]; then
          figures=$(run_one "d-$link-$dir-$r" "$limit" 2 put -p "$streams" --congestion cubic "$LAB_WORK/cli/d.bin" "$(lab_url in/d.bin)")
        else
          figures=$(run_one "d-$link-$dir-$r" "$limit" 2 get -p "$streams" --congestion cubic "$(lab_url d.bin)" "$LAB_WORK/cli/back/")
        fi
        sleep 1
        rm -rf "$LAB_WORK/srv/in" "$LAB_WORK/cli/back"; mkdir -p "$LAB_WORK/srv/in" "$LAB_WORK/cli/back"
        read -r -a f <<<"$figures"
        local v=${f[1]}
        [[ ${f[0]} == "done" ]] || v=${f[2]}   # cut at the time limit: the steady rate instead
        rate[$link,$dir]="${rate[$link,$dir]:-} $v"
        details+="| $label | $dir | $r | ${f[0]} | ${f[3]} | ${f[1]} | ${f[11]}/${f[12]} | ${f[9]} | ${f[10]} |${f[8]/#-/}"$'\n'
      done
    done
    rm -f "$LAB_WORK/cli/d.bin" "$LAB_WORK/srv/d.bin"
    link_down
  done
  echo
  echo "Rate, MB/s (median of $d_reps; pxfer's summary: the whole transfer, checksum agreement included):"
  echo
  echo "| link | put (a->b) | get (b->a) | get / put | goodput ceiling put / get |"
  echo "| --- | --- | --- | --- | --- |"
  local p g
  p=$(median <<<"${rate[sym,put]}"); g=$(median <<<"${rate[sym,get]}")
  echo "| symmetric 200/200 Mbit/s | $p | $g | $(ratio "$g" "$p") | $(mbit_goodput 200) / $(mbit_goodput 200) |"
  p=$(median <<<"${rate[asym,put]}"); g=$(median <<<"${rate[asym,get]}")
  echo "| asymmetric 200/50 Mbit/s | $p | $g | $(ratio "$g" "$p") | $(mbit_goodput 200) / $(mbit_goodput 50) |"
  echo
  echo "Every run:"
  echo
  echo "| link | direction | round | state | s | MB/s | wan0 drops a/b | machine busy % | emulator CPU % | note"
  echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
  printf '%s' "$details"
}

# ---------------------------------------------------------------------------------------------
# (c) compression

exp_c() {
  echo
  echo "## (c) compression"
  echo
  if ! "$LAB_PXFER" put --help 2>/dev/null | grep -q -- '--compress'; then
    echo "skipped: needs --compress (issue 3 point 4)"
    return 0
  fi
  local delay=20 rate_mbit=100 streams=4 limit=90 size_mib=192
  [[ $quick == 1 ]] && size_mib=64
  echo "link: ${delay} ms each way (RTT $((2 * delay)) ms), ${rate_mbit} Mbit/s, no loss, MTU 1500, default queue; seed $seed"
  echo "pxfer put -p $streams --congestion cubic --compress MODE; files of ${size_mib} MiB: random bytes (as compressed"
  echo "ROOT files are) and CSV text (bench/lab/make_text.py, ~2.6x with zstd -1); rate = file bytes / s (pxfer's summary)"
  machine_line
  head -c "${size_mib}M" /dev/urandom >"$LAB_WORK/cli/random.bin"
  python3 "$here/bench/lab/make_text.py" "$size_mib" "$LAB_WORK/cli/text.bin"
  link_up --delay "$delay" --rate "${rate_mbit}mbit"
  mkdir -p "$LAB_WORK/srv/in"
  local details="" data mode figures f wire
  local -A rate ratio_of
  for data in random text; do
    for mode in none zstd auto; do
      lab_log "(c) $data data, --compress $mode"
      figures=$(run_one "c-$data-$mode" "$limit" 2 put -p "$streams" --congestion cubic --compress "$mode" \
        "$LAB_WORK/cli/$data.bin" "$(lab_url "in/$data.bin")")
      sleep 1
      rm -rf "$LAB_WORK/srv/in"; mkdir -p "$LAB_WORK/srv/in"
      read -r -a f <<<"$figures"
      wire=$(python3 -c 'import json, sys
s = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{\"")]
s = [e for e in s if e.get("event") == "summary"]
print("%.2f" % (s[0]["bytes"] / s[0]["wire_bytes"]) if s and s[0].get("wire_bytes") else "-")' "$LAB_WORK/runs/c-$data-$mode.ndjson")
      local v=${f[1]}
      [[ ${f[0]} == "done" ]] || v=${f[2]}
      rate[$data,$mode]=$v
      ratio_of[$data,$mode]=$wire
      details+="| $data | $mode | ${f[0]} | ${f[3]} | ${f[1]} | $wire | ${f[9]} | ${f[10]} |${f[8]/#-/}"$'\n'
    done
  done
  link_down
  rm -f "$LAB_WORK/cli/random.bin" "$LAB_WORK/cli/text.bin"
  echo
  echo "Rate, MB/s of file data (link goodput ceiling $(mbit_goodput "$rate_mbit") MB/s); in brackets: file bytes / bytes sent:"
  echo
  echo "| data | --compress none | --compress zstd | --compress auto |"
  echo "| --- | --- | --- | --- |"
  for data in random text; do
    echo "| $data | ${rate[$data,none]} (${ratio_of[$data,none]}) | ${rate[$data,zstd]} (${ratio_of[$data,zstd]}) | ${rate[$data,auto]} (${ratio_of[$data,auto]}) |"
  done
  echo
  echo "Every run (CPU: machine busy % of all $(nproc) cores, emulator % of one core):"
  echo
  echo "| data | compress | state | s | MB/s | file / wire bytes | machine busy % | emulator CPU % | note"
  echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"
  printf '%s' "$details"
}

# ---------------------------------------------------------------------------------------------
# (e) files x streams matrix

exp_e() {
  echo
  echo "## (e) files x streams matrix, ramp-up"
  echo
  if ! "$LAB_PXFER" sweep --help >/dev/null 2>&1; then
    echo "skipped: needs multi-file support (issue 4)"
    return 0
  fi
  local delay=25 loss=0.01 rate_mbit=1000 files=1,3,5,10 streams=1,3,5,10,auto size=128M limit=600
  if [[ $quick == 1 ]]; then files=1,5; streams=1,5,auto; size=64M; limit=240; fi
  echo "link: as (a): ${delay} ms each way (RTT $((2 * delay)) ms), ${loss} % loss each way, ${rate_mbit} Mbit/s, MTU 1500; seed $seed; tcp_rmem/tcp_wmem max 32 MiB"
  echo "pxfer sweep --files $files --streams $streams --size $size --direction get --congestion cubic (random data; a cell's"
  echo "files start together and the rate is files x size / time of the slowest; stopped after ${limit} s)"
  echo "ramp-up (starting the files one after another, as the Edinburgh wiki recommends) is not measured: pxfer sweep starts a cell's files at once."
  machine_line
  link_up --delay "$delay" --loss "${loss}%" --rate "${rate_mbit}mbit"
  mkdir -p "$LAB_WORK/srv/sweep"
  lab_log "(e) pxfer sweep --files $files --streams $streams --size $size"
  local out="$LAB_WORK/runs/e-sweep.ndjson" rc=0
  ip netns exec "$LAB_NAME-a" timeout -s INT -k 10 "$limit" "$LAB_PXFER" sweep --files "$files" --streams "$streams" \
    --size "$size" --direction get --congestion cubic --json "$(lab_url sweep/)" >"$out" 2>"$out.err" || rc=$?
  link_down
  echo
  if [[ $rc != 0 ]]; then
    echo "pxfer sweep exit status $rc$([[ $rc == 124 ]] && echo " (time limit: the cells below are those finished)"): $(head -c 300 "$out.err")"
    echo
  fi
  echo "Rate, Mbit/s, and failed transfers per cell (\"rate, failures\", as in the Edinburgh wiki tables):"
  echo
  python3 - "$out" "$files" "$streams" <<'PYEOF'
import json, sys
cells = {}
for line in open(sys.argv[1]):
    if line.startswith("{"):
        try:
            c = json.loads(line)
        except ValueError:
            continue
        if c.get("event") == "sweep_cell":  # -p auto is streams 0 with streams_auto
            cells[(c["files"], "auto" if c.get("streams_auto") else str(c["streams"]))] = c
files = [int(x) for x in sys.argv[2].split(",")]
streams = sys.argv[3].split(",")
print("| files \\ streams | " + " | ".join(str(s) for s in streams) + " |")
print("| --- |" + " --- |" * len(streams))
for f in files:
    row = []
    for s in streams:
        c = cells.get((f, s))
        row.append("-" if c is None else "%.0f, %d" % (c["median_mbit"] or 0, c["failures"]))
    print("| %d | %s |" % (f, " | ".join(row)))
PYEOF
}

# ---------------------------------------------------------------------------------------------
# (f) ramp-up against an admission limit and a slow disk

# f_run ID FILES_DIR SERVER_ARGS -- CLIENT_ARGS: pxferd restarted with SERVER_ARGS, then one
# `pxfer put -r` of FILES_DIR; NDJSON in runs/f-ID.ndjson.
f_run() {
  local id=$1 tree=$2; shift 2
  local server_args=()
  while [[ $1 != -- ]]; do server_args+=("$1"); shift; done
  shift
  lab_server_stop
  rm -rf "$LAB_WORK/srv/f"
  mkdir -p "$LAB_WORK/srv/f"
  lab_server_start "${server_args[@]}"
  lab_log "(f) $id: pxferd ${server_args[*]}; pxfer put -r $*"
  local out="$LAB_WORK/runs/f-$id.ndjson" rc=0
  ip netns exec "$LAB_NAME-a" timeout -s INT -k 10 300 "$LAB_PXFER" put -r "$@" --json "$tree" "$(lab_url f/)" \
    >"$out" 2>"$out.err" || rc=$?
  echo "$rc" >"$out.rc"
}

exp_f() {
  echo
  echo "## (f) Ramp-up against an admission limit and a slow disk"
  echo
  if ! "$LAB_PXFERD" --help 2>/dev/null | grep -q -- --emulate-disk-rate; then
    echo "skipped: needs pxferd --emulate-disk-rate"
    return 0
  fi
  local delay=10 rate_mbit=1000 files=30 size=32M disk=40M max_active=10 queue=15s ramp=20s interval=5
  if [[ $quick == 1 ]]; then size=8M; queue=4s; ramp=5s; interval=1; fi
  echo "link: ${delay} ms each way (RTT $((2 * delay)) ms), ${rate_mbit} Mbit/s, no loss; the disk is the bottleneck:"
  echo "pxferd --emulate-disk-rate $disk (all writes of the server share $disk bytes/s, 1 s of burst)."
  echo "$files files of $size, pxfer put -r -c $files -p 2 --retries 0 --perf-interval $interval --json; three runs:"
  echo "A: all $files at once against --max-active $max_active --queue-timeout $queue; B: the same server, --ramp-up $ramp"
  echo "(one file in flight at first, $files after $ramp); C: all at once, no admission limit."
  machine_line
  link_up --delay "$delay" --rate "${rate_mbit}mbit"
  local tree="$LAB_WORK/cli/f-tree"
  mkdir -p "$tree"
  local i
  for i in $(seq -w 1 "$files"); do head -c "$size" /dev/urandom >"$tree/f$i.bin"; done
  local limit=(--emulate-disk-rate "$disk" --max-active "$max_active" --queue-timeout "$queue")
  local client=(-c "$files" -p 2 --retries 0 --perf-interval "$interval")
  f_run A "$tree" "${limit[@]}" -- "${client[@]}"
  f_run B "$tree" "${limit[@]}" -- "${client[@]}" --ramp-up "$ramp"
  f_run C "$tree" --emulate-disk-rate "$disk" -- "${client[@]}"
  link_down
  echo
  python3 - "$LAB_WORK/runs" "$interval" <<'PYEOF'
import json, os, sys
runs, interval = sys.argv[1], float(sys.argv[2])
names = {"A": "all at once, --max-active", "B": "ramp-up, --max-active", "C": "all at once, no limit"}
rows, series = [], {}
for rid in "ABC":
    path = os.path.join(runs, "f-%s.ndjson" % rid)
    events = []
    for line in open(path):
        try:
            events.append(json.loads(line))
        except ValueError:
            pass
    done = [e for e in events if e.get("event") == "file_done"]
    failed = [e for e in events if e.get("event") == "file_failed"]
    summary = next((e for e in events if e.get("event") == "batch_summary"), {})
    ends = sorted(e["finished_s"] for e in done)
    starts = sorted(e["started_s"] for e in done + failed)
    reasons = sorted({e["error"]["message"].split(": ", 1)[-1][:60] for e in failed})
    # What a user waits for one file: from its first attempt to its end, queue included.
    waits = sorted(e["finished_s"] - e["started_s"] for e in done)
    rows.append("| %s: %s | %.1f | %.1f | %d | %d | %s | %s | %s | %s |" % (
        rid, names[rid], summary.get("seconds", 0), summary.get("rate_MBps", 0), len(done), len(failed),
        "%.1f-%.1f" % (starts[0], starts[-1]) if starts else "-",
        "%.1f-%.1f (%.1f)" % (ends[0], ends[-1], ends[-1] - ends[0]) if ends else "-",
        "%.1f / %.1f" % (waits[len(waits) // 2], waits[-1]) if waits else "-",
        "; ".join(reasons) if reasons else "-"))
    series[rid] = [(e["seconds"], e["inst_Bps"] / 1e6, e.get("in_flight", 0)) for e in events if e.get("event") == "interval"]
print("| run | seconds | MB/s (done files) | done | failed | first attempts started (s) | finished, first-last (spread) (s) | time per file, median / max (s) | failures |")
print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
print("\n".join(rows))
print()
print("Aggregate rate over time (MB/s in each %g s interval; files in flight in brackets):" % interval)
print()
length = max(len(s) for s in series.values())
print("| t (s) | " + " | ".join("%g" % ((i + 1) * interval) for i in range(length)) + " |")
print("| --- |" + " --- |" * length)
for rid in "ABC":
    cells = ["%.0f (%d)" % (mb, n) for _, mb, n in series[rid]] + ["-"] * (length - len(series[rid]))
    print("| %s | %s |" % (rid, " | ".join(cells)))
PYEOF
}

# report_page LETTER: every run of that experiment on one page of charts (kept after the run).
report_page() {
  local dir="${PXLAB_REPORTS:-$PWD/pxlab-reports}" runs=()
  for f in "$LAB_WORK/runs/$1"-*.ndjson; do [[ -s $f ]] && runs+=("$f"); done
  [[ ${#runs[@]} -gt 0 ]] || return 0
  mkdir -p "$dir"
  if "$LAB_PXFER" report --title "pxfer lab experiment ($1)" "${runs[@]}" -o "$dir/experiment-$1.html" >&2; then
    lab_log "($1) report: $dir/experiment-$1.html"
  else
    lab_log "($1) report: pxfer report failed (see above)"
  fi
}

echo "# pxfer lab experiments$([[ $quick == 1 ]] && echo ' (quick)')"
for e in $which; do
  "exp_$e"
  report_page "$e"
done
