#!/bin/bash
# The installed package, moved after install (tests/install/CMakeLists.txt, label install):
#   1. cmake --install into a temporary prefix, then mv the prefix elsewhere;
#   2. the tree: what is installed (and what is not), every ELF's RUNPATH relative ($ORIGIN),
#      no file naming the build tree, the source tree or the prefix it was installed to, ldd of
#      the libraries resolving from the moved prefix or the system, --help of every program;
#   3. (a) an MPI hello built by the moved xmsgcc / xmsgcxx and run by the moved xmsgrun -n 2,
#      the installed benchmarks run the same way;
#      (b) a fresh CMake project using find_package(xmsg) with CMAKE_PREFIX_PATH=<moved prefix>;
#      (c) C programs built with pkg-config --cflags --libs xmsg / xmsg-mpi.
# Nothing is found through LD_LIBRARY_PATH: it is unset, so only RUNPATHs resolve xmsg.
#
# Environment (set by CMake): XMSG_BUILD_DIR XMSG_SOURCE_DIR XMSG_VERSION XMSG_LIBDIR
# XMSG_BINDIR XMSG_INCLUDEDIR XMSG_LIBEXECDIR XMSG_CMAKE XMSG_GENERATOR XMSG_MAKE_PROGRAM XMSG_TEST_CC
# XMSG_TEST_CXX XMSG_PKG_CONFIG XMSG_WITH_BENCHMARKS (ON/OFF).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
for v in XMSG_BUILD_DIR XMSG_SOURCE_DIR XMSG_VERSION XMSG_LIBDIR XMSG_BINDIR XMSG_INCLUDEDIR \
         XMSG_LIBEXECDIR XMSG_CMAKE XMSG_GENERATOR XMSG_TEST_CC XMSG_TEST_CXX XMSG_PKG_CONFIG; do
  [ -n "${!v:-}" ] || { echo "relocated.sh: $v is not set" >&2; exit 2; }
done
build=$(cd "$XMSG_BUILD_DIR" && pwd -P)
src=$(cd "$XMSG_SOURCE_DIR" && pwd -P)
unset LD_LIBRARY_PATH LD_PRELOAD PKG_CONFIG_PATH CMAKE_PREFIX_PATH XMSG_CC XMSG_CXX

work=$(mktemp -d "${TMPDIR:-/tmp}/xmsg-install.XXXXXX")
work=$(cd "$work" && pwd -P)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
step() { echo "== $*"; }

# ---- 1. install, move ------------------------------------------------------------------------
step "cmake --install $build --prefix $work/staged"
"$XMSG_CMAKE" --install "$build" --prefix "$work/staged" >"$work/install.log" ||
  { cat "$work/install.log"; fail "cmake --install"; }
mv "$work/staged" "$work/moved"
P="$work/moved"
bin="$P/$XMSG_BINDIR" lib="$P/$XMSG_LIBDIR" inc="$P/$XMSG_INCLUDEDIR" libexec="$P/$XMSG_LIBEXECDIR"
echo "moved to $P ($(du -sh "$P" | cut -f1))"

# ---- 2. the tree ---------------------------------------------------------------------------
step "installed files"
expected=("$bin/xmsgrun" "$bin/xmsgcc" "$bin/xmsgcxx" "$bin/xmsgfort" "$bin/xmsg_plan" "$bin/xmsg_info"
          "$lib/libxmsg.so" "$lib/libxmsg.so.0" "$lib/libxmsg.so.$XMSG_VERSION"
          "$lib/libxmsg_mpi.so" "$lib/libxmsg_mpi.so.0" "$lib/libxmsg_mpi.so.$XMSG_VERSION"
          "$inc/xmsg/xmsg.h" "$inc/xmsg/xmsg.hpp" "$inc/xmsg/mpi/mpi.h"
          "$inc/xmsg/mpi/mpif.h" "$inc/xmsg/mpi/xmsg_mpif_constants.h" "$inc/xmsg/mpi/mpi.mod"
          "$inc/xmsg/mpi/mpi_f08.mod" "$inc/xmsg/mpi/mpi_f08_types.mod" "$inc/xmsg/mpi/xmsg_mpi_f08_entries.mod"
          "$lib/pkgconfig/xmsg.pc" "$lib/pkgconfig/xmsg-mpi.pc"
          "$lib/cmake/xmsg/xmsgConfig.cmake" "$lib/cmake/xmsg/xmsgConfigVersion.cmake"
          "$lib/cmake/xmsg/xmsgTargets.cmake")
osu=()
if [ "${XMSG_WITH_BENCHMARKS:-OFF}" = ON ]; then
  for b in latency bw bibw barrier bcast allreduce alltoall alltoallv; do osu+=("$libexec/xmsg_osu_$b"); done
fi
for f in "${expected[@]}" "${osu[@]}"; do [ -e "$f" ] || fail "not installed: ${f#"$P"/}"; done
# Only the six programs in bin/; no test program, static library or the soft-RoCE provider.
bins=$(cd "$bin" && ls | sort | tr '\n' ' ')
[ "$bins" = "xmsg_info xmsg_plan xmsgcc xmsgcxx xmsgfort xmsgrun " ] || fail "bin/ holds: $bins"
stray=$(find "$P" \( -name '*.a' -o -name '*rxe*' -o -name '*test*' -o -name 'bootstrap_check' \) -print)
[ -z "$stray" ] || fail "installed but should not be: $stray"
echo "ok: ${#expected[@]} files, ${#osu[@]} benchmarks, bin/ = $bins"

step "no file names the build tree, the source tree or the install-time prefix"
for path in "$build" "$src" "$work/staged"; do
  hits=$(grep -rlF --exclude-dir=doc -- "$path" "$P" || true)  # share/doc: prose, not paths
  [ -z "$hits" ] || fail "files naming $path: $hits"
done
echo "ok"

step "RUNPATH of every installed ELF file"
# shellcheck disable=SC2016  # '$ORIGIN' is literal
elfs=0
while IFS= read -r f; do
  head -c 4 "$f" | grep -q $'^\x7fELF' || continue
  elfs=$((elfs + 1))
  case "$f" in
    "$lib"/*) want='$ORIGIN' ;;
    "$bin"/*) want='$ORIGIN/../lib' ;;
    "$libexec"/*) want='$ORIGIN/../../lib' ;;
    *) fail "ELF file outside bin/, lib/, libexec/: $f" ;;
  esac
  dyn=$(readelf -d "$f")
  if grep -q '(RPATH)' <<<"$dyn"; then fail "${f#"$P"/} has DT_RPATH, not RUNPATH"; fi
  runpath=$(sed -n 's/.*(RUNPATH).*\[\(.*\)\]$/\1/p' <<<"$dyn")
  # xmsg's own entry is the relative one; a dependency's .pc may add its own absolute directory
  # (Debian's pmix.pc: -Wl,-rpath,/usr/lib/<multiarch>/pmix2/lib), never one in the build tree.
  own=0
  IFS=: read -r -a entries <<<"$runpath"
  for e in "${entries[@]}"; do
    case "$e" in
      '$ORIGIN'*) if [ "$XMSG_LIBDIR" != lib ] || [ "$e" = "$want" ]; then own=1; else
                    fail "${f#"$P"/}: RUNPATH entry '$e', expected '$want'"; fi ;;
      "$build"* | "$src"* | "$work"* | "") fail "${f#"$P"/}: RUNPATH '$runpath' names the build tree" ;;
      /*) ;;
      *) fail "${f#"$P"/}: RUNPATH entry '$e' is neither \$ORIGIN-relative nor absolute" ;;
    esac
  done
  [ "$own" = 1 ] || fail "${f#"$P"/}: RUNPATH '$runpath' lacks '$want'"
  echo "  ${f#"$P"/}: $runpath"
done < <(find "$bin" "$lib" "$libexec" -type f 2>/dev/null)
[ "$elfs" -ge $((5 + ${#osu[@]})) ] || fail "only $elfs ELF files found"
echo "ok: $elfs ELF files"

# ldd FILE: every library resolves, none from the build or source tree, xmsg's from the prefix.
check_ldd() {
  local f="$1" out name arrow path rest real
  out=$(ldd "$f") || fail "ldd $f"
  if grep -q 'not found' <<<"$out"; then echo "$out"; fail "ldd ${f#"$P"/}: a library is not found"; fi
  while read -r name arrow path rest; do
    [ "$arrow" = "=>" ] && [ -n "$path" ] || continue
    real=$(readlink -f "$path")
    case "$real" in
      "$build"/* | "$src"/*) echo "$out"; fail "ldd ${f#"$P"/}: $name from the build tree ($real)" ;;
    esac
    case "$name" in
      libxmsg*) [ "$(dirname "$real")" = "$(readlink -f "$lib")" ] ||
                  { echo "$out"; fail "ldd ${f#"$P"/}: $name from $real, not from $lib"; } ;;
    esac
  done <<<"$out"
}
step "ldd $lib/libxmsg.so.0"
ldd "$lib/libxmsg.so.0"
for f in "$lib/libxmsg.so.0" "$lib/libxmsg_mpi.so.0" "$bin/xmsgrun" "$bin/xmsg_plan" "$bin/xmsg_info" "${osu[@]}"; do
  check_ldd "$f"
done
echo "ok"

step "--help of every program"
for p in "$bin"/* "${osu[@]}"; do
  out=$("$p" --help 2>&1) || fail "${p#"$P"/} --help exits $?"
  grep -qi 'usage' <<<"$out" || fail "${p#"$P"/} --help prints no usage: $out"
done
"$bin/xmsgcc" -showme:version | grep -qF "xmsg $XMSG_VERSION" || fail "xmsgcc -showme:version"
echo "ok"

# ---- 3a. xmsgcc / xmsgcxx / xmsgfort / xmsgrun----------------------------------------------------
step "(a) moved xmsgcc and xmsgrun -n 2"
cd "$work"
show=$("$bin/xmsgcc" -show -O2 "$here/hello_mpi.c" -o hello_mpi)
echo "$show"
for want in "-I$inc/xmsg/mpi" "-I$inc" "-L$lib" "-Wl,-rpath,$lib" "-lxmsg_mpi -lxmsg"; do
  grep -qF -- "$want" <<<"$show" || fail "xmsgcc -show lacks $want"
done
[ "$("$bin/xmsgcc" -showme)" = "$("$bin/xmsgcc" -show)" ] || fail "-showme differs from -show"
"$bin/xmsgcc" -showme:compile | grep -qF -- "-I$inc/xmsg/mpi" || fail "xmsgcc -showme:compile"
"$bin/xmsgcc" -showme:link | grep -qF -- "-L$lib" || fail "xmsgcc -showme:link"
# Through a symlink (as /usr/local/bin/xmsgcc -> /opt/xmsg/bin/xmsgcc would be), too.
ln -s "$bin/xmsgcc" "$work/xmsgcc-link"
"$work/xmsgcc-link" -show x.c | grep -qF -- "-L$lib" || fail "xmsgcc through a symlink"
"$bin/xmsgcc" -O2 -Wall -Wextra -Werror -std=c11 "$here/hello_mpi.c" -o hello_mpi
"$bin/xmsgcxx" -O2 -Wall -Wextra -Werror -std=c++17 "$here/hello_mpi.cpp" -o hello_mpi_cxx
check_ldd "$work/hello_mpi"
out=$(timeout 60 "$bin/xmsgrun" -n 2 ./hello_mpi)
echo "$out"
grep -qx 'hello_mpi: rank 0 of 2, sum 1' <<<"$out" && grep -qx 'hello_mpi: rank 1 of 2, sum 1' <<<"$out" ||
  fail "xmsgrun -n 2 hello_mpi"
out=$(timeout 60 "$bin/xmsgrun" -n 2 ./hello_mpi_cxx)
[ "$(grep -c '^hello_mpi_cxx: rank [01] of 2$' <<<"$out")" = 2 ] || fail "xmsgrun -n 2 hello_mpi_cxx: $out"
# Fortran: `use mpi` from the moved include directory (mpi.mod), linked through the moved xmsgfort.
"$bin/xmsgfort" -show x.f90 | grep -qF -- "-I$inc/xmsg/mpi" || fail "xmsgfort -show lacks -I$inc/xmsg/mpi"
"$bin/xmsgfort" -O2 "$here/hello_mpi.f90" -o hello_mpi_f90
check_ldd "$work/hello_mpi_f90"
out=$(timeout 60 "$bin/xmsgrun" -n 2 ./hello_mpi_f90)
[ "$(grep -c '^hello_mpi_f90: rank [01] of 2, sum 1$' <<<"$out")" = 2 ] || fail "xmsgrun -n 2 hello_mpi_f90: $out"
"$bin/xmsgfort" -O2 "$here/hello_mpi_f08.f90" -o hello_mpi_f08
out=$(timeout 60 "$bin/xmsgrun" -n 2 ./hello_mpi_f08)
[ "$(grep -c '^hello_mpi_f08: rank [01] of 2, sum 1$' <<<"$out")" = 2 ] || fail "xmsgrun -n 2 hello_mpi_f08: $out"
if [ ${#osu[@]} -gt 0 ]; then
  out=$(timeout 60 "$bin/xmsgrun" -n 2 "$libexec/xmsg_osu_latency" -m 0:8 -i 5 -x 1)
  grep -q '^8 ' <<<"$out" || fail "installed xmsg_osu_latency: $out"
  out=$(timeout 60 "$bin/xmsgrun" -n 2 "$libexec/xmsg_osu_allreduce" -m 4:8 -i 5 -x 1)
  grep -q '^8 ' <<<"$out" || fail "installed xmsg_osu_allreduce: $out"
  echo "ok: installed xmsg_osu_latency, xmsg_osu_allreduce"
fi

# ---- 3b. find_package(xmsg) ---------------------------------------------------------------
step "(b) find_package(xmsg) with CMAKE_PREFIX_PATH=$P"
make_program=""
[ -z "${XMSG_MAKE_PROGRAM:-}" ] || make_program="-DCMAKE_MAKE_PROGRAM=$XMSG_MAKE_PROGRAM"
"$XMSG_CMAKE" -S "$here/consumer" -B "$work/consumer" -G "$XMSG_GENERATOR" ${make_program:+"$make_program"} \
  -DCMAKE_PREFIX_PATH="$P" \
  -DCMAKE_C_COMPILER="$XMSG_TEST_CC" -DCMAKE_CXX_COMPILER="$XMSG_TEST_CXX" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF >"$work/consumer.log" 2>&1 ||
  { cat "$work/consumer.log"; fail "configuring the find_package consumer"; }
grep -qF "consumer: xmsg $XMSG_VERSION from $lib/cmake/xmsg" "$work/consumer.log" ||
  { cat "$work/consumer.log"; fail "find_package(xmsg) did not find the moved prefix"; }
grep -qF "consumer: xmsgrun $bin/xmsgrun" "$work/consumer.log" || fail "xmsg_XMSGRUN"
"$XMSG_CMAKE" --build "$work/consumer" >"$work/consumer-build.log" 2>&1 ||
  { cat "$work/consumer-build.log"; fail "building the find_package consumer"; }
check_ldd "$work/consumer/consumer_cxx"
check_ldd "$work/consumer/consumer_mpi"
"$work/consumer/consumer_cxx" | grep -qx 'consumer_cxx: rank 0 of 1 got 0' || fail "consumer_cxx as a singleton"
out=$(timeout 120 "$XMSG_CMAKE" --build "$work/consumer" --target run_consumer 2>&1) ||
  { echo "$out"; fail "run_consumer (xmsg::xmsgrun -n 2)"; }
grep -q 'consumer_cxx: rank 1 of 2 got 1' <<<"$out" && grep -q 'hello_mpi: rank 1 of 2, sum 1' <<<"$out" ||
  { echo "$out"; fail "run_consumer output"; }
echo "ok: consumer_cxx (xmsg::xmsg), consumer_mpi (xmsg::mpi), xmsg::xmsgrun -n 2"

step "xmsgConfigVersion.cmake: $XMSG_VERSION satisfies 0.1, not 0.2 or 1.0"
cat >"$work/version.cmake" <<EOF
foreach(case "0.1;TRUE" "${XMSG_VERSION};TRUE" "0.2;FALSE" "1.0;FALSE")
  list(GET case 0 PACKAGE_FIND_VERSION)
  list(GET case 1 want)
  string(REPLACE "." ";" parts "\${PACKAGE_FIND_VERSION}.0.0")
  list(GET parts 0 PACKAGE_FIND_VERSION_MAJOR)
  list(GET parts 1 PACKAGE_FIND_VERSION_MINOR)
  list(GET parts 2 PACKAGE_FIND_VERSION_PATCH)
  set(PACKAGE_VERSION_COMPATIBLE FALSE)
  include("$lib/cmake/xmsg/xmsgConfigVersion.cmake")
  if(NOT "\${PACKAGE_VERSION_COMPATIBLE}" STREQUAL "\${want}")
    message(FATAL_ERROR "xmsg \${PACKAGE_VERSION} for find_package(xmsg \${PACKAGE_FIND_VERSION}): compatible=\${PACKAGE_VERSION_COMPATIBLE}")
  endif()
endforeach()
EOF
"$XMSG_CMAKE" -P "$work/version.cmake" || fail "xmsgConfigVersion.cmake"
echo "ok"

# ---- 3c. pkg-config ---------------------------------------------------------------------------
step "(c) pkg-config --cflags --libs xmsg with PKG_CONFIG_PATH=$lib/pkgconfig"
export PKG_CONFIG_PATH="$lib/pkgconfig"
[ "$("$XMSG_PKG_CONFIG" --modversion xmsg)" = "$XMSG_VERSION" ] || fail "pkg-config --modversion xmsg"
flags=$("$XMSG_PKG_CONFIG" --cflags --libs xmsg)
echo "xmsg: $flags"
mflags=$("$XMSG_PKG_CONFIG" --cflags --libs xmsg-mpi)
echo "xmsg-mpi: $mflags"
grep -q -- '-lxmsg_mpi.*-lxmsg' <<<"$mflags" && grep -q -- '/xmsg/mpi' <<<"$mflags" || fail "xmsg-mpi flags"
# shellcheck disable=SC2086  # the flags are words
"$XMSG_TEST_CC" -O2 -Wall -Wextra -Werror -std=c11 "$here/hello_c.c" $flags -Wl,-rpath,"$lib" -o hello_c
# shellcheck disable=SC2086
"$XMSG_TEST_CC" -O2 -Wall -Wextra -Werror -std=c11 "$here/hello_mpi.c" $mflags -Wl,-rpath,"$lib" -o hello_mpi_pc
check_ldd "$work/hello_c"
./hello_c | grep -qx 'hello_c: rank 0 of 1' || fail "hello_c as a singleton"
out=$(timeout 60 "$bin/xmsgrun" -n 2 ./hello_c)
[ "$(grep -c '^hello_c: rank [01] of 2$' <<<"$out")" = 2 ] || fail "xmsgrun -n 2 hello_c: $out"
out=$(timeout 60 "$bin/xmsgrun" -n 2 ./hello_mpi_pc)
grep -qx 'hello_mpi: rank 1 of 2, sum 1' <<<"$out" || fail "xmsgrun -n 2 hello_mpi_pc: $out"
echo "ok"

echo "install: relocated prefix OK"
