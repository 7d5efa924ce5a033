#!/usr/bin/env bash
# The main job: the OSU-style all-to-all latency benchmark (build/bin/xmsg_alltoall, a link to
# xmsg_osu_alltoall) on 4 ranks through xmsgrun.
set -euo pipefail
cd "$(dirname "$0")/.."
bench=build/bin/xmsg_alltoall
[ -x "$bench" ] || { echo "demo: $bench is missing; run 'make build' (or 'make demo', which builds it)" >&2; exit 1; }
exec build/bin/xmsgrun -n 4 "$bench"
