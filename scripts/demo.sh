#!/usr/bin/env bash
# The main job: until the all-to-all benchmark exists, a 4-rank hello through xmsgrun.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -x build/bin/xmsg_alltoall ]; then
  exec build/bin/xmsgrun -n 4 build/bin/xmsg_alltoall
fi
exec build/bin/xmsgrun -n 4 build/bin/xmsg_hello
