#!/bin/sh
# xrc-acceptance.sh: programs nobody in this project wrote, run unmodified against the XRC
# soft-RoCE device (inside `softroce-run.sh --xrc`): each is a server and a client process on
# rxe0, and each pair must exit 0 on both sides. Prints one "xrc-acceptance: NAME: PASS|FAIL"
# line per pair, and the pair's output on failure; exits 1 if any failed.
#
# Usage: xrc-acceptance.sh [NAME...]   (default: all)
set -u

dev=rxe0
gid=1            # the IPv4-mapped GID (RoCE v2) of the guest's rxe0
server_ip=10.0.2.15   # eth0 of the guest (guest-init.sh); rdma_cm cannot bind 127.0.0.1 to rxe0
failed=0
ran=""
log=$(mktemp -d "${TMPDIR:-/tmp}/xrc-acceptance.XXXXXX")
trap 'rm -rf "$log"' EXIT

# pair NAME SERVER_COMMAND CLIENT_COMMAND (each one shell word, run with sh -c)
pair() {
  name=$1 server=$2 client=$3
  ran="$ran $name"
  timeout 120 sh -c "$server" >"$log/$name.server" 2>&1 &
  spid=$!
  # The server must be listening before the client connects; on a loaded host the guest may
  # take longer than the first wait, so a client refused at connection time (and only then:
  # the server is still waiting for it) tries again.
  sleep 2
  for attempt in 1 2 3 4 5 6; do
    timeout 120 sh -c "$client" >"$log/$name.client" 2>&1
    cstatus=$?
    [ $cstatus -ne 0 ] && kill -0 $spid 2>/dev/null &&
      grep -Eq "Couldn't connect|Connection refused|rdma_connect|rdma_resolve" "$log/$name.client" || break
    echo "xrc-acceptance: $name: client attempt $attempt refused (server not listening yet); retrying"
    sleep 3
  done
  wait $spid
  sstatus=$?
  # Seen once in 20-odd runs (a clean-clone CI, 2026-12-01): rdma_xserver got its message and
  # ended 0 while rdma_xclient, its data delivered, never returned (exit 124 from timeout),
  # likely waiting in rdma_disconnect for a peer already gone. Not understood yet (issue 16's
  # follow-up): the whole pair runs once more, and says so; a second failure fails the test.
  if [ $sstatus -eq 0 ] && [ $cstatus -eq 124 ] && [ -z "${retried:-}" ]; then
    echo "xrc-acceptance: $name: server done, client hung after it (exit 124); running the pair once more"
    sed "s/^/  $name client (first run): /" "$log/$name.client"
    retried=1
    ran=${ran% $name}
    pair "$name" "$server" "$client"
    retried=
    return
  fi
  if [ $cstatus -eq 0 ] && [ $sstatus -eq 0 ]; then
    echo "xrc-acceptance: $name: PASS"
    tail -n 3 "$log/$name.client" | sed "s/^/  $name client: /"
  else
    echo "xrc-acceptance: $name: FAIL (server exit $sstatus, client exit $cstatus)"
    sed "s/^/  $name server: /" "$log/$name.server"
    sed "s/^/  $name client: /" "$log/$name.client"
    failed=1
  fi
}

selected="$*"
want() {
  [ -z "$selected" ] && return 0
  for w in $selected; do [ "$w" = "$1" ] && return 0; done
  return 1
}

# ibverbs-utils: XRC SRQs behind one TGT, 2 clients' worth of SRQs, data checked by the tool.
want ibv_xsrq_pingpong && pair ibv_xsrq_pingpong \
  "ibv_xsrq_pingpong -d $dev -g $gid -n 20 -s 4096" \
  "ibv_xsrq_pingpong -d $dev -g $gid -n 20 -s 4096 $server_ip"
# rdmacm-utils: the connection manager's XRC path (rdma_create_srq_ex, XRC_SEND / XRC_RECV QPs).
want rdma_xserver && pair rdma_xserver \
  "rdma_xserver -c x -p 7471" \
  "rdma_xclient -c x -p 7471 -s $server_ip"
# perftest 4.5: XRC where it supports it (send latency and bandwidth; RDMA WRITE and READ
# through the TGT, checked against the PD of the SRQ each request names).
want ib_send_lat && pair ib_send_lat \
  "ib_send_lat -d $dev -x $gid -c XRC -n 200 -p 18601" \
  "ib_send_lat -d $dev -x $gid -c XRC -n 200 -p 18601 $server_ip"
want ib_send_bw && pair ib_send_bw \
  "ib_send_bw -d $dev -x $gid -c XRC -n 200 -p 18602" \
  "ib_send_bw -d $dev -x $gid -c XRC -n 200 -p 18602 $server_ip"
want ib_write_lat && pair ib_write_lat \
  "ib_write_lat -d $dev -x $gid -c XRC -n 200 -p 18604" \
  "ib_write_lat -d $dev -x $gid -c XRC -n 200 -p 18604 $server_ip"
want ib_read_lat && pair ib_read_lat \
  "ib_read_lat -d $dev -x $gid -c XRC -n 200 -p 18603" \
  "ib_read_lat -d $dev -x $gid -c XRC -n 200 -p 18603 $server_ip"

[ -n "$ran" ] || { echo "xrc-acceptance: no pair selected by '$selected'"; exit 2; }
exit $failed
