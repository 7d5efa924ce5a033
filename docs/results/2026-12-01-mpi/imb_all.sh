#!/bin/bash
cd /tmp/ext/imb-xmsg
R=/tmp/ext/scripts/imbone.sh; L=runs
rm -rf $L; mkdir -p $L
M1="PingPong PingPongSpecificSource PingPongAnySource PingPing PingPingSpecificSource PingPingAnySource Sendrecv Exchange Allreduce Reduce Reduce_local Reduce_scatter Reduce_scatter_block Allgather Allgatherv Gather Gatherv Scatter Scatterv Alltoall Alltoallv Bcast Barrier Uniband Biband"
NBC="Ibcast Iallgather Iallgatherv Igather Igatherv Iscatter Iscatterv Ialltoall Ialltoallv Ireduce Ireduce_scatter Iallreduce Ibarrier"
P2P="PingPong PingPing Unirandom Birandom Corandom Stencil2D Stencil3D SendRecv_Replace"
for np in 2 4 8; do
  $R $L MPI1_all_n$np $np ./IMB-MPI1 -npmin 2 -msglog 0:16 -iter 100 -time 10
  for b in $M1; do $R $L MPI1_${b}_n$np $np ./IMB-MPI1 $b -npmin 2 -msglog 0:16 -iter 100 -time 10; done
done
for np in 2 4; do
  $R $L NBC_all_n$np $np ./IMB-NBC -npmin 2 -msglog 0:14
  for b in $NBC; do
    $R $L NBC_${b}_n$np $np ./IMB-NBC $b -npmin 2 -msglog 0:14
    $R $L NBC_${b}_pure_n$np $np ./IMB-NBC ${b}_pure -npmin 2 -msglog 0:14
  done
  $R $L P2P_all_n$np $np ./IMB-P2P -msglog 0:14
  for b in $P2P; do $R $L P2P_${b}_n$np $np ./IMB-P2P -msglog 0:14 $b; done
done
