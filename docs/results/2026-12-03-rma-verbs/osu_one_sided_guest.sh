#!/bin/sh
# Inside the soft-RoCE guest (tests/softroce/softroce-run.sh [--xrc --provider ...] -- sh THIS MODE):
# every OSU 7.4 one-sided program, every window kind and synchronisation option, 2 ranks on 2
# virtual nodes, so every put and get crosses verbs (RDMA WRITE/READ in RC or XRC mode). OSU is
# built outside the tree (/tmp/ext/osu-xmsg, configure CC=build/bin/xmsgcc), never committed.
# Prints: mode prog window sync status (ok / refused: OSU does not take that option / FAIL rc).
# Emulated soft-RoCE timings say nothing about a NIC: only short runs, for correctness.
MODE=${1:-rc}
B=/work/main/build/bin
D=${OSU_DIR:-/work/main/build/ext-osu}  # copies of /tmp/ext/osu-xmsg/c/mpi/one-sided (the guest does not see /tmp)
X=""
[ "$MODE" = xrc ] && X="-x XMSG_VERBS_MODE=xrc"
[ "$MODE" = rc ] && X="-x XMSG_TRANSPORTS=verbs"
for prog in osu_put_latency osu_get_latency osu_put_bw osu_get_bw osu_put_bibw osu_acc_latency osu_fop_latency \
            osu_cas_latency osu_get_acc_latency; do
  for win in create allocate dynamic; do
    for sync in lock flush flush_local lock_all pscw fence; do
      out=$($B/xmsgrun --timeout 120 -n 2 --nodes 2 $X -x XMSG_WAIT_POLICY=yield $D/$prog -w $win -s $sync \
            -m 1:${MAX:-4096} -i ${ITERS:-100} -x 10 2>&1)
      rc=$?
      if [ $rc -eq 0 ]; then st=ok
      elif echo "$out" | grep -qi "invalid\|not supported\|usage"; then st=refused
      else st="FAIL $rc"; echo "$out" | tail -3 | sed 's/^/  | /'
      fi
      echo "$MODE $prog $win $sync $st"
    done
  done
done
