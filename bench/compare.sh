#!/usr/bin/env bash
# pxfer side by side with the tools sites use (issue 12, point 1): iperf3 -P N (the ceiling),
# globus-url-copy -fast -p N against globus-gridftp-server, xrdcp -S N against xrootd (defaults
# and XRD_CPUSEPGWRTRD=0), scp -c aes128-gcm@openssh.com against sshd, and pxfer against pxferd
# with a token as docs/guide.md sets it up. Writes bench/results/compare.md (or $PXCMP_OUT).
#   sudo bench/compare.sh
# Needs root for three things only: installing the peers from Debian (apt-get), creating the
# unprivileged user `pxbench`, and the private network namespace (ip netns). Everything else,
# servers and clients, runs as pxbench inside that namespace on 127.0.0.1, with the data in
# /dev/shm; the servers are stopped by PID at the end (bench/compare_run.py does the runs).
#
# Environment (defaults: the full run; 10 minutes on these 2 cores at load 1-4, 20 at load 10):
#   PXCMP_ROUNDS=3            rounds; the tools are interleaved within each round
#   PXCMP_LARGE=2G            size of the large file (get, put, encrypted get/put, iperf3 bytes)
#   PXCMP_STREAMS="1 4 8"     stream counts for the large file and iperf3
#   PXCMP_SMALL_COUNT=10000   files in the small-file tree
#   PXCMP_SMALL_SIZE=64K      size of each small file
#   PXCMP_SMALL_CONCURRENCY=8 files at once (pxfer -c, globus-url-copy -cc, xrdcp --parallel)
#   PXCMP_ENC_STREAMS=4       pxfer --encrypt streams
#   PXCMP_WORKS="ceiling large small encrypt"     which work to run
#   PXCMP_TOOLS="pxfer gridftp xrdcp xrdcp-tuned scp"  which tools (scp only in the encrypted work)
#                             also xrdcp-cksum: tuned xrdcp verifying an Adler-32 of each file end
#                             to end (--cksum adler32:source), as pxfer always does
#   PXCMP_WARM=1              touch and free the run's size in memory before each run (0: off;
#                             this VM hands freed memory to its host: docs/performance.md section 12)
#   PXCMP_DATA_DIR=/dev/shm   where the data lives on both ends; a directory on a disk (/var/tmp)
#                             measures what each tool's durability costs there (pxfer makes every
#                             file durable before it counts: docs/performance.md section 15)
#   PXCMP_OUT=bench/results/compare.md
#   PXFER_BUILD_DIR=build     where pxfer and pxferd are built (Release)
#   PXCMP_BIN_DIR=DIR         use DIR/pxfer and DIR/pxferd as they are, without building
# A quick run for development (a few minutes):
#   PXCMP_ROUNDS=1 PXCMP_LARGE=256M PXCMP_SMALL_COUNT=1000 PXCMP_STREAMS=4 sudo -E bench/compare.sh
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
[ "$(id -u)" -eq 0 ] || { echo "bench/compare.sh: run as root (apt-get, a user, a network namespace); the runs themselves are unprivileged" >&2; exit 2; }
out="${PXCMP_OUT:-$here/bench/results/compare.md}"
build_dir="${PXFER_BUILD_DIR:-$here/build}"
user=pxbench

peers=(globus-gridftp-server-progs globus-gass-copy-progs xrootd-server xrootd-client iperf3 openssh-server openssh-client)
missing=()
for p in "${peers[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "bench/compare.sh: installing ${missing[*]}" >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends -o DPkg::Lock::Timeout=600 "${missing[@]}" >/dev/null
fi
# PXCMP_BIN_DIR: take pxfer and pxferd from there instead of building (e.g. a saved build).
if [ -n "${PXCMP_BIN_DIR:-}" ]; then
  bin_dir="$PXCMP_BIN_DIR"
else
  "$here/tools/build.sh" "$build_dir" Release pxfer-cli pxferd >/dev/null
  bin_dir="$build_dir/bin"
fi
id "$user" >/dev/null 2>&1 || useradd --system --shell /bin/sh --home-dir /nonexistent --no-create-home "$user"

ns="pxcmp-$$"
data_dir="${PXCMP_DATA_DIR:-/dev/shm}"
work="$(mktemp -d "$data_dir/pxcmp.XXXXXX")"
data_fs="$(stat -f -c %T "$work")"
on_disk=0; [ "$data_fs" = tmpfs ] || on_disk=1
runner=""
cleanup() {
  [ -n "$runner" ] && kill "$runner" 2>/dev/null && wait "$runner" 2>/dev/null
  # Servers the runner could not stop (it was killed): by the PIDs it wrote down.
  if [ -s "$work/server-pids" ]; then
    while read -r pid; do kill "$pid" 2>/dev/null || true; done < "$work/server-pids"
  fi
  ip netns del "$ns" 2>/dev/null || true
  rm -rf "/etc/netns/$ns" "$work"
}
trap cleanup EXIT
trap "exit 143" TERM INT  # so the EXIT trap runs on a signal too
ip netns add "$ns"
# GridFTP resolves the host's own name: without a hosts file naming it inside the namespace the
# server fails with "globus_libc_addr_to_contact_string failed". `ip netns exec` mounts this file
# over /etc/hosts.
mkdir -p "/etc/netns/$ns"
printf '127.0.0.1 localhost %s\n::1 localhost\n' "$(hostname)" > "/etc/netns/$ns/hosts"
ip netns exec "$ns" ip link set lo up

# The binaries are copied so the unprivileged user can run them whatever the build tree's modes.
mkdir -p "$work/bin"
cp "$bin_dir/pxfer" "$bin_dir/pxferd" "$work/bin/"
chown -R "$user:" "$work"
chmod 0755 "$work"

cpu="$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)"
mem="$(awk '/MemTotal/ {printf "%.1f GiB", $2 / 1048576}' /proc/meminfo)"
rev="$(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo unknown)$(git -C "$here" diff --quiet 2>/dev/null || echo '+changes')"
meta=$(python3 -c 'import json, sys; print(json.dumps(dict(zip(sys.argv[1::2], sys.argv[2::2]))))' \
  "date" "$(date -u '+%Y-%m-%d %H:%M UTC')" \
  "machine" "$(nproc) cores ($cpu), $mem RAM, $(hostname)" \
  "kernel" "$(uname -r)" \
  "OS" "$(. /etc/os-release && echo "$PRETTY_NAME")" \
  "pxfer" "git $rev, binaries from $bin_dir (Release)" \
  "congestion control" "$(ip netns exec "$ns" sysctl -n net.ipv4.tcp_congestion_control) (the namespace default, for every tool)" \
  "data" "$data_dir ($data_fs$([ "$on_disk" = 1 ] && echo ", $(findmnt -n -o SOURCE --target "$work")")) on both ends" \
  "command" "${PXCMP_DATA_DIR:+PXCMP_DATA_DIR=$PXCMP_DATA_DIR }PXCMP_ROUNDS=${PXCMP_ROUNDS:-3} PXCMP_LARGE=${PXCMP_LARGE:-2G} PXCMP_STREAMS=\"${PXCMP_STREAMS:-1 4 8}\" PXCMP_SMALL_COUNT=${PXCMP_SMALL_COUNT:-10000} PXCMP_SMALL_SIZE=${PXCMP_SMALL_SIZE:-64K} PXCMP_WORKS=\"${PXCMP_WORKS:-ceiling large small encrypt}\" PXCMP_WARM=${PXCMP_WARM:-1} bench/compare.sh")

ip netns exec "$ns" setpriv --reuid "$user" --regid "$user" --clear-groups -- \
  env -i PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin USER="$user" HOME="$work/home" \
  PXCMP_WORK_DIR="$work" PXCMP_BIN="$work/bin" PXCMP_META="$meta" PXCMP_ON_DISK="$on_disk" \
  ${PXCMP_ROUNDS:+PXCMP_ROUNDS="$PXCMP_ROUNDS"} ${PXCMP_LARGE:+PXCMP_LARGE="$PXCMP_LARGE"} \
  ${PXCMP_STREAMS:+PXCMP_STREAMS="$PXCMP_STREAMS"} ${PXCMP_SMALL_COUNT:+PXCMP_SMALL_COUNT="$PXCMP_SMALL_COUNT"} \
  ${PXCMP_SMALL_SIZE:+PXCMP_SMALL_SIZE="$PXCMP_SMALL_SIZE"} ${PXCMP_SMALL_CONCURRENCY:+PXCMP_SMALL_CONCURRENCY="$PXCMP_SMALL_CONCURRENCY"} \
  ${PXCMP_ENC_STREAMS:+PXCMP_ENC_STREAMS="$PXCMP_ENC_STREAMS"} ${PXCMP_WORKS:+PXCMP_WORKS="$PXCMP_WORKS"} \
  ${PXCMP_TOOLS:+PXCMP_TOOLS="$PXCMP_TOOLS"} ${PXCMP_TIMEOUT:+PXCMP_TIMEOUT="$PXCMP_TIMEOUT"} ${PXCMP_REAP_WAIT:+PXCMP_REAP_WAIT="$PXCMP_REAP_WAIT"} \
  ${PXCMP_WARM:+PXCMP_WARM="$PXCMP_WARM"} \
  python3 "$here/bench/compare_run.py" > "$work/compare.md" & runner=$!
wait "$runner"
runner=""
mkdir -p "$(dirname "$out")"
cp "$work/compare.md" "$out"
echo "bench/compare.sh: wrote $out" >&2
