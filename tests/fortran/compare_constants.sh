#!/bin/bash
# mpif.h's, the mpi module's and the mpi_f08 module's constants equal mpi.h's: the C values
# (xmsg_mpif_gen values) against what the Fortran programs built from mpif.h, `use mpi` and
# `use mpi_f08` print (a handle's MPI_VAL).
# usage: compare_constants.sh MPIF_GEN OUT_DIR
set -uo pipefail
gen="$1" out="$2"
c=$("$gen" values) || { echo "FAIL: $gen values"; exit 1; }
status=0
programs="constants_mpif constants_use"
[ -x "$out/constants_f08" ] && programs="$programs constants_f08"
for prog in $programs; do
  f=$("$out/$prog") || { echo "FAIL: $prog exited non-zero"; status=1; continue; }
  if [ "$c" != "$f" ]; then
    echo "FAIL: $prog differs from the C values:"
    diff <(echo "$c") <(echo "$f")
    status=1
  else
    echo "$prog: $(wc -l <<<"$f") constants equal to C's"
  fi
done
[ "$status" = 0 ] && echo "fortran_constants: OK"
exit "$status"
