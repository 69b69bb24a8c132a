#!/usr/bin/env bash
# Builds the libFuzzer targets with clang++ (-fsanitize=fuzzer,address,undefined) against the
# pure sources they exercise (no Asio, no sockets) and runs each for PXFER_FUZZ_SECONDS (60).
#   fuzz/run.sh [TARGET...]      build and run (default: all targets)
#   fuzz/run.sh --build-only     build only
#   fuzz/run.sh --seeds          rewrite fuzz/corpus/frame from wire::encode (fuzz/make_seeds.cpp)
# Build output and the growing working corpus go to PXFER_FUZZ_BUILD_DIR (build-fuzz); the seed
# corpus in fuzz/corpus/<target>/ is only read. A crash leaves its input in
# $PXFER_FUZZ_BUILD_DIR/artifacts/ and makes the script fail.
# Exit status: 0 clean, 1 a target crashed or failed to build, 77 clang/libFuzzer unavailable.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="${PXFER_FUZZ_BUILD_DIR:-$here/build-fuzz}"
seconds="${PXFER_FUZZ_SECONDS:-60}"
cxx="${PXFER_FUZZ_CXX:-}"
if [ -z "$cxx" ]; then
  for c in clang++ clang++-14 clang++-15 clang++-16; do command -v "$c" >/dev/null && { cxx="$c"; break; }; done
fi
if [ -z "$cxx" ]; then
  echo "fuzz/run.sh: SKIPPED: no clang++ (tools/deps.sh installs clang and libclang-rt-14-dev)" >&2
  exit 77
fi

declare -A sources=(
  [frame]="fuzz/fuzz_frame.cpp src/wire/codec.cpp src/wire/block_codec.cpp src/wire/names.cpp src/wire/split.cpp src/common/error.cpp"
  [url]="fuzz/fuzz_url.cpp src/common/url.cpp"
  [units]="fuzz/fuzz_units.cpp src/common/units.cpp src/doctor/doctor.cpp"
  [path]="fuzz/fuzz_path.cpp src/common/safe_path.cpp src/client/listing_check.cpp src/common/log_safe.cpp src/common/error.cpp"
  [block]="fuzz/fuzz_block.cpp src/checksum/block_mac.cpp src/wire/codec.cpp src/wire/block_codec.cpp src/wire/names.cpp src/wire/split.cpp src/common/error.cpp"
)
# Libraries a target links besides the sources (libcrypto: OpenSSL's Poly1305 and HMAC).
declare -A libs=([block]="-lcrypto")
all_targets=(frame url units path block)
# The layer macros the libraries define (src/CMakeLists.txt): a target compiled here outside CMake
# says which layers it builds on, or each header's layer guard stops it. fuzz_path checks the
# client's listing check, so its target is a client of the core.
layers=(-DPXFER_LAYER_COMMON=1 -DPXFER_LAYER_CORE=1 -DPXFER_LAYER_CLIENT=1)
flags=(-std=c++20 -O1 -g -fno-omit-frame-pointer -fsanitize=fuzzer,address,undefined
       -fno-sanitize-recover=all -I"$here/include" -I"$here/src" "${layers[@]}")

mkdir -p "$out/artifacts"
# Probe once: clang without compiler-rt's libFuzzer cannot link -fsanitize=fuzzer.
probe="$out/probe.cpp"
printf 'extern "C" int LLVMFuzzerTestOneInput(const unsigned char*, unsigned long) { return 0; }\n' >"$probe"
if ! "$cxx" -fsanitize=fuzzer,address,undefined "$probe" -o "$out/probe" 2>"$out/probe.log"; then
  echo "fuzz/run.sh: SKIPPED: $cxx cannot link -fsanitize=fuzzer (install libclang-rt-14-dev): $(head -1 "$out/probe.log")" >&2
  exit 77
fi

build() {
  local t="$1" src=()
  for s in ${sources[$t]}; do src+=("$here/$s"); done
  # Rebuild only when a source or header is newer than the binary.
  if [ -x "$out/fuzz-$t" ] && [ -z "$(find "${src[@]}" "$here/include" "$here/src/wire" -newer "$out/fuzz-$t" -print -quit)" ]; then
    return 0
  fi
  echo "== building fuzz-$t" >&2
  # shellcheck disable=SC2086
  "$cxx" "${flags[@]}" "${src[@]}" ${libs[$t]:-} -o "$out/fuzz-$t"
}

if [ "${1:-}" = "--seeds" ]; then
  "$cxx" -std=c++20 -O1 "${layers[@]}" -I"$here/include" -I"$here/src" "$here/fuzz/make_seeds.cpp" "$here/src/wire/codec.cpp" "$here/src/wire/block_codec.cpp" "$here/src/wire/names.cpp" "$here/src/wire/split.cpp" \
    "$here/src/common/error.cpp" -o "$out/make_seeds"
  mkdir -p "$here/fuzz/corpus/frame"
  "$out/make_seeds" "$here/fuzz/corpus/frame"
  exit 0
fi
build_only=0
if [ "${1:-}" = "--build-only" ]; then build_only=1; shift; fi
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=("${all_targets[@]}")

status=0
for t in "${targets[@]}"; do
  [ -n "${sources[$t]:-}" ] || { echo "fuzz/run.sh: unknown target $t (${all_targets[*]})" >&2; exit 2; }
  build "$t" || { echo "fuzz/run.sh: fuzz-$t FAILED TO BUILD" >&2; status=1; continue; }
  [ "$build_only" = 1 ] && continue
  work="$out/corpus/$t"
  mkdir -p "$work"
  echo "== fuzz-$t for ${seconds}s (seeds: fuzz/corpus/$t)" >&2
  # The first corpus directory receives new inputs; the seed directory in the repo is only read.
  if "$out/fuzz-$t" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
      -artifact_prefix="$out/artifacts/$t-" "$work" "$here/fuzz/corpus/$t" >"$out/$t.log" 2>&1; then
    echo "fuzz-$t: clean, $(grep -m1 -o 'stat::number_of_executed_units: *[0-9]*' "$out/$t.log" | grep -o '[0-9]*$') runs, corpus $(ls "$work" | wc -l) inputs" >&2
  else
    echo "fuzz-$t: FAILED; log $out/$t.log, input in $out/artifacts/" >&2
    grep -E 'ERROR|runtime error|SUMMARY|Test unit written' "$out/$t.log" | head -10 >&2 || true
    status=1
  fi
done
exit "$status"
