#!/usr/bin/env bash
# Builds pxfer and runs the whole test suite (ctest prints its summary), then a short smoke run
# of the benchmark binary, a short fuzz run (fuzz/run.sh) and the unit tests plus the Errors,
# Faults and Limits e2e suites under ASan+UBSan. Installs missing Debian packages itself.
# Exit status: 0 only when ctest, the fuzz run and the sanitizer run all pass.
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

# libFuzzer targets (fuzz/): PXFER_FUZZ_SECONDS per target (60; 0 skips). A crash fails the run;
# no clang/libFuzzer is a visible skip (exit 77), not a failure.
if [ "${PXFER_FUZZ_SECONDS:-30}" != 0 ]; then
  echo "== fuzzing: ${PXFER_FUZZ_SECONDS:-30}s per target (fuzz/run.sh) =="
  fuzz_status=0
  PXFER_FUZZ_SECONDS="${PXFER_FUZZ_SECONDS:-30}" PXFER_FUZZ_BUILD_DIR="${PXFER_FUZZ_BUILD_DIR:-$build_dir-fuzz}" "$here/fuzz/run.sh" || fuzz_status=$?
  if [ "$fuzz_status" = 77 ]; then echo "fuzzing SKIPPED (see the reason above)"
  elif [ "$fuzz_status" != 0 ]; then status=1; fi
else
  echo "== fuzzing SKIPPED: PXFER_FUZZ_SECONDS=0 =="
fi

# The unit tests and the e2e tests named by PXFER_SANITIZE_E2E (a ctest regex; default the
# Errors, Faults and Limits suites) under AddressSanitizer + UndefinedBehaviorSanitizer, in their own build
# directory (-DPXFER_SANITIZE=ON). PXFER_SANITIZE=0 skips. docs/security.md has the measured cost.
if [ "${PXFER_SANITIZE:-1}" != 0 ]; then
  asan_dir="${PXFER_ASAN_BUILD_DIR:-$build_dir-asan}"
  e2e_regex="${PXFER_SANITIZE_E2E:-^(Errors|Faults|Limits)[./]}"
  echo "== ASan+UBSan build ($asan_dir) and run: unit tests, e2e ${e2e_regex} =="
  started=$(date +%s)
  asan_status=0
  # -O1 -g1, asserts on: faster to build than -O2 -g (docs/security.md), line numbers in reports.
  cmake -S "$here" -B "$asan_dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1" \
    -DPXFER_SANITIZE=ON -DPXFER_BUILD_BENCH=OFF >/dev/null || asan_status=$?
  [ "$asan_status" = 0 ] && { ninja -C "$asan_dir" -j "$jobs" pxfer-unit-tests pxfer-e2e-tests || asan_status=$?; }
  built=$(date +%s)
  if [ "$asan_status" = 0 ]; then
    export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:strict_string_checks=1}"
    export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
    (cd "$asan_dir" && ctest --output-on-failure --timeout 900 -j 1 -L unit) || asan_status=$?
    (cd "$asan_dir" && ctest --output-on-failure --timeout 900 -j 1 -L e2e -R "$e2e_regex") || asan_status=$?
  fi
  echo "ASan+UBSan: build $((built - started))s, tests $(($(date +%s) - built))s, status $asan_status"
  [ "$asan_status" = 0 ] || status=1
else
  echo "== ASan+UBSan run SKIPPED: PXFER_SANITIZE=0 =="
fi
exit "$status"
