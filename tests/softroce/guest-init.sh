#!/bin/sh
# /init of the soft-RoCE guest (busybox). Brings up rxe0 on eth0, mounts the host's root over
# 9p, runs the host's command in a chroot of it and powers off. Setup failures are printed as
# "xmsg-guest-error: ..." and reported as status 125 so the host side fails loudly.
export PATH=/sbin:/bin

results=""

fail() {
  echo "xmsg-guest-error: $*"
  if [ -n "$results" ] && [ -d "/mnt/host$results" ]; then
    echo "xmsg-guest-error: $*" >> "/mnt/host$results/output.log"
    echo 125 > "/mnt/host$results/status"
  fi
  sync
  poweroff -f
}

mount -t proc proc /proc
mount -t sysfs sysfs /sys
for word in $(cat /proc/cmdline 2>/dev/null); do
  case "$word" in xmsg.results=*) results="${word#xmsg.results=}" ;; esac
done
mount -t devtmpfs devtmpfs /dev
mkdir -p /dev/pts /dev/shm
mount -t devpts devpts /dev/pts
mount -t tmpfs tmpfs /dev/shm
mount -t tmpfs tmpfs /tmp
mount -t tmpfs tmpfs /run

for m in $(cat /modules/order); do
  insmod "/modules/$m.ko" 2>/dev/null || echo "xmsg-guest: insmod $m failed (may be built in)"
done
mount -t configfs configfs /sys/kernel/config 2>/dev/null

mount -t 9p -o trans=virtio,version=9p2000.L,ro,msize=262144 hostroot /mnt/host || fail "cannot mount the host root over 9p"
[ -n "$results" ] || fail "no xmsg.results= on the kernel command line"

/sbin/ip link set lo up
# Jumbo frames as on a RoCE fabric: rxe's path MTU follows the netdev (1500 -> 1024, 9000 ->
# 4096), and rxe's cost is per packet, so large READs run ~1.7x faster at 4096.
/sbin/ip link set eth0 mtu 9000 || echo "xmsg-guest: eth0 keeps its MTU (rxe path MTU 1024)"
/sbin/ip link set eth0 up || fail "no eth0 (virtio_net not loaded?)"
/sbin/ip addr add 10.0.2.15/24 dev eth0
/sbin/rdma link add rxe0 type rxe netdev eth0 || fail "rdma link add rxe0 failed (rdma_rxe or crc32 missing?)"
[ -e /dev/infiniband/uverbs0 ] || sleep 1
[ -e /dev/infiniband/uverbs0 ] || fail "/dev/infiniband/uverbs0 did not appear"

# The host's root with the guest's kernel filesystems; a private /tmp, /run and /dev/shm so the
# command sees a clean machine and leaves nothing behind.
mount -t proc proc /mnt/host/proc || fail "cannot mount proc in the chroot"
mount --rbind /sys /mnt/host/sys || fail "cannot bind /sys in the chroot"
mount --rbind /dev /mnt/host/dev || fail "cannot bind /dev in the chroot"
# A checkout under /tmp or /run (CI clones wherever it likes) must stay visible over the private
# tmpfs: hold its top directory aside with a bind mount and put it back on top of the tmpfs.
top=""
case "$results" in /tmp/*|/run/*) top=$(echo "$results" | cut -d/ -f1-3) ;; esac
if [ -n "$top" ]; then
  mkdir -p /mnt/hostview
  mount --bind "/mnt/host$top" /mnt/hostview || fail "cannot hold $top aside"
fi
mount -t tmpfs tmpfs /mnt/host/tmp || fail "cannot mount /tmp in the chroot"
mount -t tmpfs tmpfs /mnt/host/run || fail "cannot mount /run in the chroot"
if [ -n "$top" ]; then
  mkdir -p "/mnt/host$top"
  mount --move /mnt/hostview "/mnt/host$top" || fail "cannot keep $top visible in the chroot"
fi
mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 results "/mnt/host$results" || fail "cannot mount the results share at $results"

echo "xmsg-guest: running the command"
chroot /mnt/host /bin/sh "$results/command.sh" > "/mnt/host$results/output.log" 2>&1
echo $? > "/mnt/host$results/status"
echo "xmsg-guest: command finished with status $(cat "/mnt/host$results/status")"
sync
poweroff -f
