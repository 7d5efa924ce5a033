#!/bin/sh
# fop/cas latency (probe-atomics, built into build/probe), device atomics on and off, 2 ranks on
# 2 nodes over verbs; extra arguments go to xmsgrun (-x XMSG_VERBS_MODE=xrc).
x=/work/main/build/bin/xmsgrun
for rep in 1 2 3; do
  for a in on off; do
    echo "== rep $rep XMSG_RMA_DEVICE_ATOMICS=$a $*"
    $x --timeout 60 -x XMSG_TRANSPORTS=verbs -x XMSG_RMA_DEVICE_ATOMICS=$a "$@" -n 2 --nodes 2 /work/main/build/probe/probe-atomics 2000 2>&1
  done
done
