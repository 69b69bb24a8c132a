#!/usr/bin/env bash
# Configures and builds pxfer: tools/build.sh [BUILD_DIR] [BUILD_TYPE]. Installs dependencies first.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build_dir="${1:-$here/build}"
build_type="${2:-Release}"
"$here/tools/deps.sh"
# PXFER_CMAKE_ARGS: more -D options (tools/test.sh: -DPXFER_UNITY=ON for a build from scratch).
# shellcheck disable=SC2086
cmake -S "$here" -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE="$build_type" ${PXFER_CMAKE_ARGS:-} >/dev/null
ninja -C "$build_dir" "${@:3}"
