#!/bin/bash
# Builds the MPI test programs with the generated compiler wrappers, as a user would.
set -euo pipefail
bin="$1" src="$2" out="$3"
mkdir -p "$out"
"$bin/xmsgcc" -show -O2 x.c -o x | grep -q -- "-lxmsg_mpi -lxmsg" || { echo "xmsgcc -show lacks the libraries"; exit 1; }
"$bin/xmsgcc" -c -show x.c | grep -qv -- "-lxmsg" || { echo "xmsgcc -c -show should not link"; exit 1; }
"$bin/xmsgcc" -O2 -Wall -Wextra -Werror -std=c11 "$src/mpi_program.c" -o "$out/mpi_program"
"$bin/xmsgcc" -O2 -Wall -Wextra -Werror "$src/mpi_fatal.c" -o "$out/mpi_fatal"
"$bin/xmsgcxx" -O2 -Wall -Wextra -Werror -std=c++17 "$src/mpi_program_cxx.cpp" -o "$out/mpi_program_cxx"
echo "built with xmsgcc/xmsgcxx into $out"
