#!/usr/bin/env bash
# build-module.sh: build the XRC-capable rdma_rxe for the soft-RoCE guest's kernel.
#
#   build-module.sh KERNEL_PACKAGE OUT_DIR
#
# KERNEL_PACKAGE is the guest's kernel (linux-image-6.1.0-NN-amd64, what linux-image-amd64
# depends on). Downloads, never installs, Debian's linux-source-6.1 and the guest kernel's
# headers of exactly that package's version, takes Debian's drivers/infiniband/sw/rxe from the
# source, applies kernel/rxe-xrc.patch, adds kernel/rxe_xrc.[ch] and builds the module out of
# tree against those headers. Writes OUT_DIR/rdma_rxe.ko (debug info stripped: 10 MB -> 250 KB).
# Fails, saying which, when the source or headers of that version are not in the archive.
set -euo pipefail

die() { echo "build-module: $*" >&2; exit 1; }
[ $# -eq 2 ] || die "usage: build-module.sh KERNEL_PACKAGE OUT_DIR"
pkg="$1"
out="$2"
here=$(cd "$(dirname "$0")" && pwd)

version=$(apt-cache show "$pkg" 2>/dev/null | sed -n 's/^Version: //p' | head -1)
[ -n "$version" ] || die "apt-cache knows no version of $pkg"
abi=${pkg#linux-image-}            # 6.1.0-57-amd64
flavour=${abi##*-}                 # amd64
abi_base=${abi%-"$flavour"}        # 6.1.0-57
series=$(echo "$abi" | cut -d. -f1-2)   # 6.1
want=("linux-source-$series" "linux-headers-$abi" "linux-headers-$abi_base-common" "linux-kbuild-$series")

work=$(mktemp -d "${TMPDIR:-/tmp}/rxe-xrc-build.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/deb" "$work/root"
for p in "${want[@]}"; do
  have=$(apt-cache madison "$p" 2>/dev/null | awk -F'|' '{gsub(/ /,"",$2); print $2}' | grep -Fx "$version" || true)
  [ -n "$have" ] || die "$p $version (the version of the guest kernel $pkg) is not in the archive; found: $(apt-cache madison "$p" 2>/dev/null | awk -F'|' '{gsub(/ /,"",$2); printf "%s ", $2}')"
  (cd "$work/deb" && apt-get download -q "$p=$version" >/dev/null 2>&1) || die "apt-get download $p=$version failed"
done
for d in "$work"/deb/*.deb; do dpkg-deb -x "$d" "$work/root"; done
headers="$work/root/usr/src/linux-headers-$abi"
[ -d "$headers" ] || die "no $headers in linux-headers-$abi"
# The arch headers' Makefile includes the common ones by absolute path; point it at this copy.
echo "include $work/root/usr/src/linux-headers-$abi_base-common/Makefile" > "$headers/Makefile"

tarball=$(ls "$work"/root/usr/src/linux-source-"$series".tar.* 2>/dev/null | head -1)
[ -n "$tarball" ] || die "no source tarball in linux-source-$series"
tar -xaf "$tarball" -C "$work" "linux-source-$series/drivers/infiniband/sw/rxe" ||
  die "cannot extract drivers/infiniband/sw/rxe from $tarball"
src="$work/linux-source-$series/drivers/infiniband/sw/rxe"
patch -s -p1 -d "$src" < "$here/kernel/rxe-xrc.patch" ||
  die "kernel/rxe-xrc.patch does not apply to Debian's rxe of $version"
cp "$here/kernel/rxe_xrc.c" "$here/kernel/rxe_xrc.h" "$src/"

make -s -C "$headers" M="$src" CONFIG_RDMA_RXE=m -j"$(nproc)" modules >"$work/make.log" 2>&1 ||
  { tail -n 40 "$work/make.log" >&2; die "building rdma_rxe failed (log above)"; }
grep -E "warning:" "$work/make.log" >&2 || true
mkdir -p "$out"
strip --strip-debug -o "$out/rdma_rxe.ko" "$src/rdma_rxe.ko"
echo "$pkg $version" > "$out/rdma_rxe.version"
