#!/usr/bin/env bash
# Builds pxfer and runs the whole test suite (ctest prints its summary), then a short smoke run
# of the benchmark binary. Installs missing Debian packages itself. Exit status: ctest's.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build_dir="${PXFER_BUILD_DIR:-$here/build}"
jobs="$(nproc)"

"$here/tools/build.sh" "$build_dir" Release -j "$jobs"

status=0
(cd "$build_dir" && ctest --output-on-failure --timeout 600 -j 1) || status=$?

echo "== benchmark smoke run (bench/results/ has the real figures) =="
"$build_dir/bin/pxfer-bench" --benchmark_min_time=0.01 \
  --benchmark_filter='Encode|Decode|BlockHeader|Adler32|Sha256|RawLoopback|LoopbackPut/4|LoopbackGet/4' || status=$?
exit "$status"
