#!/usr/bin/env bash
# Ceph's S3 gateway (RGW, Debian's Ceph 16.2) on free loopback ports, for tests: one monitor, one
# OSD keeping its objects in memory (memstore), one radosgw, all under <stateDir>, with cephx off
# (loopback only). A second real S3 implementation beside scripts/s3.sh's S3Proxy: RGW accepts
# If-Match only with an unquoted ETag and ignores If-Match on DELETE (docs/backends/s3.md).
#   scripts/ceph-rgw.sh start <stateDir>   prints the s3:// lock URI as the LAST line
#   scripts/ceph-rgw.sh stop <stateDir>    stops whatever start started, and waits until it is gone
# Run scripts/install-ceph.sh first.
set -euo pipefail
bucket=latchkey
# test-only credentials of the local gateway (it listens on 127.0.0.1 only)
access=latchkey-test
secret=latchkey-test-secret
daemons=(rgw osd mon)

usage() { echo "usage: $0 start|stop <stateDir>" >&2; exit 2; }
[ $# -eq 2 ] || usage
cmd=$1
state="$(mkdir -p "$2" && cd "$2" && pwd)"
conf="$state/ceph.conf"

free_port() {
  node -e "const s=require('net').createServer();s.listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})"
}

stop_daemon() {
  local f="$state/$1.pid"
  [ -f "$f" ] || return 0
  local pid; pid=$(cat "$f")
  kill -TERM -- "-$pid" 2>/dev/null || true
  for _ in $(seq 1 100); do
    kill -0 "$pid" 2>/dev/null || { rm -f "$f"; return 0; }
    sleep 0.1
  done
  kill -KILL -- "-$pid" 2>/dev/null || true
  rm -f "$f"
}

stop_all() {
  for d in "${daemons[@]}"; do stop_daemon "$d"; done
}

fail() {
  echo "ceph-rgw: $1; logs:" >&2
  tail -n 30 "$state"/log/*.log >&2 2>/dev/null || true
  stop_all
  exit 1
}

# daemon <name> <command…>: runs a daemon in the foreground of a session of its own
daemon() {
  local name=$1; shift
  setsid -f bash -c 'echo $$ > "$0"; exec "$@"' "$state/$name.pid" "$@" </dev/null >"$state/log/$name.out" 2>&1
}

# s3 <method> <path>: a SigV4-signed request to the gateway; prints the HTTP status. RGW checks the
# signature against x-amz-content-sha256, which curl's --aws-sigv4 does not send by itself.
s3() {
  curl -s -o /dev/null -m 10 -w '%{http_code}' -X "$1" --aws-sigv4 "aws:amz:us-east-1:s3" \
    --user "$access:$secret" -H 'x-amz-content-sha256: UNSIGNED-PAYLOAD' "http://127.0.0.1:$rgwport$2" || true
}

start() {
  command -v ceph-mon >/dev/null && command -v radosgw >/dev/null \
    || { echo "ceph not installed: run scripts/install-ceph.sh" >&2; exit 1; }
  rm -rf "$state/mon.a" "$state/osd.0" "$state/run" "$state/log" "$state/monmap"
  mkdir -p "$state/mon.a" "$state/osd.0" "$state/run" "$state/log"
  local fsid monport osduuid
  fsid=$(cat /proc/sys/kernel/random/uuid)
  osduuid=$(cat /proc/sys/kernel/random/uuid)
  monport=$(free_port)
  rgwport=$(free_port)
  cat > "$conf" <<CONF
[global]
fsid = $fsid
mon host = v2:127.0.0.1:$monport
public network = 127.0.0.0/8
auth cluster required = none
auth service required = none
auth client required = none
ms bind ipv6 = false
run dir = $state/run
log file = $state/log/\$name.log
admin socket = $state/run/\$name.asok
pid file = $state/run/\$name.pid
chdir = $state
# one OSD: every pool keeps one copy, few placement groups, no warnings about it
osd pool default size = 1
osd pool default min size = 1
osd pool default pg num = 8
osd pool default pgp num = 8
osd pool default pg autoscale mode = off
mon allow pool size one = true
mon warn on pool no redundancy = false
mon max pg per osd = 1000
osd crush chooseleaf type = 0
mon data avail warn = 1
mon data avail crit = 0
[mon.a]
mon data = $state/mon.a
[osd.0]
osd data = $state/osd.0
osd objectstore = memstore
memstore device bytes = 1073741824
[client.rgw]
# cephx is off, and a client without it can only use crc mode (radosgw asks for secure by default)
ms mon client mode = crc
ms client mode = crc
rgw frontends = beast endpoint=127.0.0.1:$rgwport
rgw dns name = 127.0.0.1
CONF
  monmaptool --create --fsid "$fsid" --addv a "[v2:127.0.0.1:$monport]" "$state/monmap" >/dev/null
  ceph-mon -c "$conf" -i a --mkfs --monmap "$state/monmap" >"$state/log/mkfs-mon.out" 2>&1 || fail "ceph-mon --mkfs failed"
  daemon mon ceph-mon -c "$conf" -i a -f
  local id
  id=$(timeout 60 ceph -c "$conf" osd new "$osduuid" 2>"$state/log/osd-new.err") || fail "ceph osd new failed"
  [ "$id" = 0 ] || fail "ceph osd new gave id $id"
  ceph-osd -c "$conf" -i 0 --mkfs --osd-uuid "$osduuid" >"$state/log/mkfs-osd.out" 2>&1 || fail "ceph-osd --mkfs failed"
  daemon osd ceph-osd -c "$conf" -i 0 -f
  daemon rgw radosgw -c "$conf" -n client.rgw -f
  local code=000
  for _ in $(seq 1 1800); do
    code=$(s3 GET /)
    [ -n "$code" ] && [ "$code" != 000 ] && break
    sleep 0.1
  done
  [ "$code" = 403 ] || [ "$code" = 200 ] || fail "radosgw did not answer on port $rgwport (HTTP $code)"
  radosgw-admin -c "$conf" -n client.admin user create --uid latchkey --display-name latchkey \
    --access-key "$access" --secret-key "$secret" >/dev/null 2>"$state/log/user.err" || fail "radosgw-admin user create failed"
  code=$(s3 PUT "/$bucket")
  case "$code" in
    200|409) ;;
    *) fail "creating bucket $bucket failed: HTTP $code" ;;
  esac
  echo "ceph rgw on http://127.0.0.1:$rgwport (pids mon $(cat "$state/mon.pid"), osd $(cat "$state/osd.pid"), rgw $(cat "$state/rgw.pid"))" >&2
  echo "s3://$bucket/locks?endpoint=http://127.0.0.1:$rgwport&region=us-east-1&pathStyle=true&accessKeyId=$access&secretAccessKey=$secret"
}

case "$cmd" in
  start) stop_all; start ;;
  stop) stop_all ;;
  *) usage ;;
esac
