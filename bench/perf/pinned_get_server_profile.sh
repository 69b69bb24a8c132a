#!/usr/bin/env bash
# bench/perf/pinned_get_server_profile.sh [A_BIN] [B_BIN]: pxferd sending a get, profiled
# (bench/perf/pinned_server_profile.sh get): /tmp/pg-srv-a.data and /tmp/pg-srv-b.data.
exec "$(dirname "$0")/pinned_server_profile.sh" get "$@"
