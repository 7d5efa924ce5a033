#!/bin/bash
# Builds the Fortran test programs with bin/xmsgfort, as a user would (and the C half of the
# handle test with bin/xmsgcc), after checking what xmsgfort -show adds.
# usage: build_with_xmsgfort.sh BIN_DIR SOURCE_DIR OUT_DIR MPIF_GEN
set -euo pipefail
bin="$1" src="$2" out="$3" gen="$4"
mkdir -p "$out"
fort="$bin/xmsgfort"
"$fort" -show -O2 x.f90 -o x | grep -q -- "-lxmsg_mpi -lxmsg" || { echo "xmsgfort -show lacks the libraries"; exit 1; }
if "$fort" -c -show x.f90 | grep -q -- "-lxmsg"; then echo "xmsgfort -c -show should not link"; exit 1; fi
"$fort" -showme:compile | grep -q -- "-I" || { echo "xmsgfort -showme:compile lacks the include path"; exit 1; }
XMSG_FC=/bin/echo "$fort" probe.f90 | grep -q "probe.f90" || { echo "XMSG_FC does not override the compiler"; exit 1; }
# Exact comparisons are intended: every value checked is exactly representable.
fortc() { "$fort" -O1 -g -Wall -Wextra -Werror -Wno-compare-reals -fimplicit-none "$@"; }
cd "$out"
for p in p2p coll types rma io callbacks fatal; do
  fortc -std=f2018 "$src/$p.f90" -o "fortran_$p"
done
# mpi_f08 exists when the build found python3 (runtime/mpi/fortran/CMakeLists.txt).
f08=no
if [ -e "$(dirname "$gen")/include/mpi_f08.mod" ]; then
  f08=yes
  fortc -std=f2018 "$src/f08.f90" -o fortran_f08
  fortc -std=f2018 "$src/f08_more.f90" -o fortran_f08_more
else
  echo "no mpi_f08.mod next to the generated constants: mpi_f08 not built, its programs skipped"
fi
# INCLUDE 'mpif.h' declares every constant in the including unit: -Wextra's unused-parameter
# warning would name each one the program does not use (as with MPICH's and Open MPI's mpif.h).
fortc -Wno-unused-parameter "$src/fixed.f" -o fortran_fixed
"$bin/xmsgcc" -O1 -g -Wall -Wextra -Werror -std=c11 -c "$src/handles_c.c" -o handles_c.o
fortc "$src/handles.f90" handles_c.o -o fortran_handles
# Every constant, printed by C (the generator) and by Fortran through mpif.h and through the
# modules: tests/fortran/compare_constants.sh compares them.
"$gen" program-f constants_mpif.f
"$gen" program-f90 constants_use.f90
[ "$f08" = yes ] && "$gen" program-f08 constants_f08.f90
"$fort" -O0 -Wall -Werror constants_mpif.f -o constants_mpif
"$fort" -O0 -Wall -Werror constants_use.f90 -o constants_use
[ "$f08" = yes ] && "$fort" -O0 -Wall -Werror constants_f08.f90 -o constants_f08
rm -f ./*.mod
echo "built with xmsgfort into $out"
