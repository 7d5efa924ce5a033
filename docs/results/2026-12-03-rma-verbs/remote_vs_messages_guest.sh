#!/bin/sh
# Inside the soft-RoCE guest: OSU 7.4 put/get latency and bandwidth across 2 virtual nodes over
# verbs, the remote path (RDMA WRITE/READ) against the message path (XMSG_RMA_REMOTE=off, the
# target's service applies each request), interleaved, ROUNDS rounds. Soft-RoCE is emulated
# (qemu TCG, rxe in the guest kernel): the ratio says what leaving the target's CPU out saves
# here, not what a NIC does. Prints: mode prog path round size value.
MODE=${1:-rc}
B=/work/main/build/bin
D=${OSU_DIR:-/work/main/build/ext-osu}
X="-x XMSG_TRANSPORTS=verbs"
[ "$MODE" = xrc ] && X="-x XMSG_VERBS_MODE=xrc"
for round in $(seq 1 ${ROUNDS:-3}); do
  for case in osu_put_latency:flush osu_get_latency:flush osu_put_bw:flush osu_get_bw:flush; do
    prog=${case%%:*}; sync=${case##*:}
    for path in remote messages; do
      r=on; [ $path = messages ] && r=off
      $B/xmsgrun --timeout 300 -n 2 --nodes 2 $X -x XMSG_RMA_REMOTE=$r $D/$prog -w allocate -s $sync \
        -m 1:${MAX:-65536} -i ${ITERS:-1000} -x 100 2>/dev/null |
        awk -v m=$MODE -v p=$prog -v a=$path -v r=$round 'NF>=2 && $1 ~ /^[0-9]+$/ {print m, p, a, r, $1, $2}'
    done
  done
done
