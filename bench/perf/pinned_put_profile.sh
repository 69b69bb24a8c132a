#!/usr/bin/env bash
# bench/perf/pinned_put_profile.sh [A_BIN] [B_BIN]: pxferd receiving a put, profiled
# (bench/perf/pinned_server_profile.sh put): /tmp/pp-a.data and /tmp/pp-b.data.
exec "$(dirname "$0")/pinned_server_profile.sh" put "$@"
