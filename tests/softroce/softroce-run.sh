#!/usr/bin/env bash
# softroce-run.sh: run one host-built command inside a qemu guest that has a soft-RoCE (rxe0)
# RDMA device, and return its exit status and output.
#
#   softroce-run.sh [--xrc [--provider PATH]] [--cache DIR] [--timeout SECONDS] [--memory MB]
#                   [--env NAME=VALUE]... -- COMMAND [ARGS...]
#
# This host has no RDMA device and its kernel no InfiniBand stack, but Debian's own kernel ships
# rdma_rxe. So: download that kernel (never installed on the host), build a small busybox
# initramfs with the RDMA, virtio and 9p modules, boot it under qemu (TCG: KVM hangs here),
# mount the host's root read-only over 9p, chroot into it and run COMMAND there unchanged, from
# the same working directory. Kernel and initramfs are cached in DIR (default
# $XDG_CACHE_HOME/xmsg-softroce) so later runs only pay for the boot (~5 s) and the command.
#
# Exit status: COMMAND's, or 124 when qemu ran past --timeout (it is killed), or 125 when the
# guest never reported a status (boot failure: the console log is printed).
#
# --xrc boots an XRC-capable rxe0 instead: Debian's rdma_rxe rebuilt with the project's XRC code
# (rxe-xrc/build-module.sh, cached next to the image) and COMMAND run with RDMAV_DRIVERS naming
# the project's own verbs provider for it (--provider, default build/lib/libxmsg_rxe under the
# checkout), which libibverbs then prefers over Debian's librxe. Without --xrc the guest runs
# Debian's module and provider unchanged.
# Installs what it needs when missing: the packages scripts/deps/softroce.txt names (one list for
# `make deps` and for this script run on its own).
set -euo pipefail

die() { echo "softroce-run: $*" >&2; exit 125; }

cache="${XDG_CACHE_HOME:-$HOME/.cache}/xmsg-softroce"
timeout_s=240
memory_mb=512
guest_env=()
xrc=0
provider=""
while [ $# -gt 0 ]; do
  case "$1" in
    --cache) [ $# -ge 2 ] || die "--cache needs a directory"; cache="$2"; shift 2 ;;
    --timeout) [[ "${2:-}" =~ ^[0-9]+$ ]] && [ "$2" -gt 0 ] || die "--timeout needs a positive number of seconds, got '${2:-}'"; timeout_s="$2"; shift 2 ;;
    --memory) [[ "${2:-}" =~ ^[0-9]+$ ]] && [ "$2" -ge 128 ] || die "--memory needs megabytes >= 128, got '${2:-}'"; memory_mb="$2"; shift 2 ;;
    --env) [[ "${2:-}" == *=* ]] || die "--env needs NAME=VALUE, got '${2:-}'"; guest_env+=("$2"); shift 2 ;;
    --xrc) xrc=1; shift ;;
    --provider) [ $# -ge 2 ] || die "--provider needs the provider's path without -rdmav34.so"; provider="$2"; shift 2 ;;
    --) shift; break ;;
    *) die "unknown argument '$1' (usage: softroce-run.sh [--xrc [--provider PATH]] [--cache DIR] [--timeout S] [--memory MB] [--env N=V]... -- COMMAND [ARGS...])" ;;
  esac
done
[ $# -gt 0 ] || die "no COMMAND given after --"
[ -z "$provider" ] || [ $xrc -eq 1 ] || die "--provider is for --xrc only"
if [ $xrc -eq 1 ]; then
  [ -n "$provider" ] || provider="$(cd "$(dirname "$0")/../.." && pwd)/build/lib/libxmsg_rxe"
  case "$provider" in /*) ;; *) provider="$PWD/$provider" ;; esac
  [ -f "$provider-rdmav34.so" ] || die "--xrc: no verbs provider at $provider-rdmav34.so (build the target xmsg_rxe_provider, or name it with --provider)"
fi

# ---- packages ---------------------------------------------------------------------------------
deps_list="$(cd "$(dirname "$0")/../.." && pwd)/scripts/deps/softroce.txt"
[ -f "$deps_list" ] || die "missing $deps_list (the harness's package list)"
need=()
for p in $(sed 's/#.*//' "$deps_list"); do
  [ "$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null)" = installed ] || need+=("$p")
done
if [ ${#need[@]} -gt 0 ]; then
  echo "softroce-run: installing ${need[*]}" >&2
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  # Other tests may be installing too: wait for the dpkg lock rather than fail on it.
  $SUDO apt-get -o DPkg::Lock::Timeout=300 update -q >/dev/null || die "apt-get update failed"
  $SUDO apt-get -o DPkg::Lock::Timeout=300 install -y -q --no-install-recommends "${need[@]}" >/dev/null ||
    die "apt-get install ${need[*]} failed"
fi

mkdir -p "$cache"
cache=$(cd "$cache" && pwd)
here=$(cd "$(dirname "$0")" && pwd)

# ---- kernel and initramfs (built once, under a lock so parallel ctests share the work) -------
build_image() {
  local pkg
  pkg=$(apt-cache depends linux-image-amd64 2>/dev/null | sed -n 's/^ *Depends: \(linux-image-[0-9].*-amd64\)$/\1/p' | head -1)
  if [ -z "$pkg" ]; then
    apt-get -o DPkg::Lock::Timeout=300 update -q >/dev/null 2>&1 || true
    pkg=$(apt-cache depends linux-image-amd64 2>/dev/null | sed -n 's/^ *Depends: \(linux-image-[0-9].*-amd64\)$/\1/p' | head -1)
  fi
  [ -n "$pkg" ] || die "cannot tell which kernel linux-image-amd64 depends on (apt-cache depends linux-image-amd64)"
  local work="$cache/work"
  rm -rf "$work"; mkdir -p "$work/deb" "$work/kernel"
  (cd "$work/deb" && apt-get download "$pkg" >/dev/null 2>&1) || die "apt-get download $pkg failed"
  dpkg-deb -x "$work"/deb/*.deb "$work/kernel" || die "dpkg-deb -x of $pkg failed"
  local kver
  kver=$(ls "$work/kernel/lib/modules" | head -1)
  [ -n "$kver" ] && [ -f "$work/kernel/boot/vmlinuz-$kver" ] || die "no kernel image in $pkg"

  local root="$work/initramfs"
  mkdir -p "$root"/{bin,sbin,lib,lib64,proc,sys,dev,tmp,run,mnt/host,modules,etc}
  cp /bin/busybox "$root/bin/busybox"
  for applet in sh mount umount mkdir cat echo insmod poweroff sleep chroot sync ls dmesg timeout; do
    ln -sf busybox "$root/bin/$applet"
  done
  # iproute2's ip and rdma with their libraries (busybox's own ip cannot add an rdma link).
  local tool lib
  for tool in /sbin/ip /usr/bin/rdma; do
    cp "$tool" "$root/sbin/"
    for lib in $(ldd "$tool" | awk '/=>/ {print $3} /^\t\/lib/ {print $1}'); do
      mkdir -p "$root$(dirname "$lib")"
      cp -L "$lib" "$root$lib"
    done
  done
  # Dependency order matters and modinfo does not tell all of it: rxe needs the crc32 crypto
  # algorithm (crc32_generic) although no module dependency says so.
  local modules="crc32_generic crc32-pclmul ib_core ib_uverbs udp_tunnel ip6_udp_tunnel rdma_rxe ib_cm iw_cm
    configfs rdma_cm rdma_ucm virtio_ring virtio virtio_pci_modern_dev virtio_pci_legacy_dev virtio_pci
    failover net_failover virtio_net 9pnet netfs fscache 9p 9pnet_virtio"
  local m f order=""
  for m in $modules; do
    f=$(find "$work/kernel/lib/modules/$kver" -name "$m.ko*" -o -name "${m//_/-}.ko*" | head -1)
    if [ -z "$f" ]; then continue; fi  # built into this kernel
    case "$f" in
      *.ko.xz) xz -dc "$f" > "$root/modules/$m.ko" ;;
      *.ko.zst) zstd -qdc "$f" > "$root/modules/$m.ko" ;;
      *.ko.gz) gzip -dc "$f" > "$root/modules/$m.ko" ;;
      *) cp "$f" "$root/modules/$m.ko" ;;
    esac
    order="$order $m"
  done
  echo "$order" > "$root/modules/order"
  cp "$here/guest-init.sh" "$root/init"
  chmod 755 "$root/init"
  (cd "$root" && find . | cpio -o -H newc --quiet | gzip -1) > "$work/initrd.gz"
  mv "$work/kernel/boot/vmlinuz-$kver" "$cache/vmlinuz"
  mv "$work/initrd.gz" "$cache/initrd.gz"
  echo "$pkg $(cat "$here/guest-init.sh" "$0" | sha256sum | cut -c1-16)" > "$cache/stamp"
  rm -rf "$work"
}

# The XRC image: the plain initramfs with rdma_rxe replaced by the XRC build of the same
# kernel version's source.
xrc_stamp_wanted() {
  echo "$(cat "$cache/stamp") $(cat "$here"/rxe-xrc/kernel/* "$here/rxe-xrc/build-module.sh" | sha256sum | cut -c1-16)"
}
build_xrc_image() {
  local pkg work
  pkg=$(cut -d' ' -f1 "$cache/stamp")
  work="$cache/work-xrc"
  rm -rf "$work"; mkdir -p "$work/root"
  "$here/rxe-xrc/build-module.sh" "$pkg" "$work/module" || die "building the XRC rdma_rxe for $pkg failed"
  (cd "$work/root" && gzip -dc "$cache/initrd.gz" | cpio -id --quiet) || die "cannot unpack $cache/initrd.gz"
  [ -f "$work/root/modules/rdma_rxe.ko" ] || die "the plain initramfs has no modules/rdma_rxe.ko to replace"
  cp "$work/module/rdma_rxe.ko" "$work/root/modules/rdma_rxe.ko"
  (cd "$work/root" && find . | cpio -o -H newc --quiet | gzip -1) > "$work/initrd-xrc.gz"
  mv "$work/initrd-xrc.gz" "$cache/initrd-xrc.gz"
  xrc_stamp_wanted > "$cache/stamp-xrc"
  rm -rf "$work"
}

stamp_wanted() {
  echo "$(cat "$here/guest-init.sh" "$0" | sha256sum | cut -c1-16)"
}
(
  flock -w 600 9 || die "timed out waiting for the image lock in $cache"
  if [ ! -f "$cache/vmlinuz" ] || [ ! -f "$cache/initrd.gz" ] || [ ! -f "$cache/stamp" ] ||
     [ "$(cut -d' ' -f2 "$cache/stamp")" != "$(stamp_wanted)" ]; then
    echo "softroce-run: building the guest kernel and initramfs in $cache" >&2
    build_image
  fi

  if [ $xrc -eq 1 ] && { [ ! -f "$cache/initrd-xrc.gz" ] || [ "$(cat "$cache/stamp-xrc" 2>/dev/null)" != "$(xrc_stamp_wanted)" ]; }; then
    echo "softroce-run: building the XRC rdma_rxe and its initramfs in $cache" >&2
    build_xrc_image
  fi
) 9>"$cache/.lock"

# ---- one run ------------------------------------------------------------------------------------
run=$(mktemp -d "$cache/run.XXXXXX")
qemu_pid=""
cleanup() {
  [ -n "$qemu_pid" ] && kill "$qemu_pid" 2>/dev/null || true
  rm -rf "$run"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
case "$run" in *[[:space:]]*) die "cache path '$run' contains whitespace (the guest reads it from the kernel command line)";; esac

{
  echo "cd $(printf '%q' "$PWD") || exit 126"
  [ $xrc -eq 0 ] || echo "export RDMAV_DRIVERS=$(printf '%q' "$provider")"
  for kv in "${guest_env[@]}"; do echo "export $(printf '%q' "$kv")"; done
  printf 'exec'; printf ' %q' "$@"; echo
} > "$run/command.sh"

# The guest writes output.log and status into $run, which it mounts (writable) at the same path
# inside the chrooted host root, so the command sees the host's paths unchanged.
initrd="$cache/initrd.gz"
[ $xrc -eq 0 ] || initrd="$cache/initrd-xrc.gz"
start=$(date +%s)
set +e
timeout --kill-after=10 "$timeout_s" qemu-system-x86_64 \
  -accel tcg,tb-size=64 -cpu max -m "$memory_mb" -smp 2 \
  -display none -no-reboot -monitor none -serial "file:$run/console.log" \
  -kernel "$cache/vmlinuz" -initrd "$initrd" \
  -nic user,model=virtio-net-pci,restrict=on \
  -virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap \
  -virtfs "local,path=$run,mount_tag=results,security_model=none,multidevs=remap" \
  -append "console=ttyS0 panic=-1 quiet loglevel=3 xmsg.results=$run" </dev/null
qemu_status=$?
set -e
elapsed=$(( $(date +%s) - start ))

if [ -f "$run/output.log" ]; then cat "$run/output.log"; fi
if [ $qemu_status -eq 124 ] || [ $qemu_status -eq 137 ]; then
  echo "softroce-run: qemu did not finish within ${timeout_s}s and was killed; console tail:" >&2
  tail -n 30 "$run/console.log" >&2 || true
  exit 124
fi
if [ ! -f "$run/status" ]; then
  echo "softroce-run: the guest reported no status (qemu exit $qemu_status); console tail:" >&2
  tail -n 40 "$run/console.log" >&2 || true
  exit 125
fi
status=$(cat "$run/status")
if grep -q '^xmsg-guest-error' "$run/console.log"; then
  grep '^xmsg-guest-error' "$run/console.log" >&2
fi
echo "softroce-run: guest command exited $status after ${elapsed}s (boot included)" >&2
exit "$status"
