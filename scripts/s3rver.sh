#!/usr/bin/env bash
# s3rver 3.7.1 (a fake S3 server for Node) on a free loopback port, for the test that the S3 backend's
# probe refuses a store ignoring preconditions: s3rver answers 200 to a second If-None-Match: * create.
#   scripts/s3rver.sh start <stateDir>   prints the s3:// lock URI as the LAST line
#   scripts/s3rver.sh stop <stateDir>    stops it, and waits until it is gone
# Run scripts/install-s3rver.sh first.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/.." && pwd)"
bin="$root/.tools/s3rver/node_modules/.bin/s3rver"
bucket=latchkey

usage() { echo "usage: $0 start|stop <stateDir>" >&2; exit 2; }
[ $# -eq 2 ] || usage
cmd=$1
state="$(mkdir -p "$2" && cd "$2" && pwd)"

free_port() {
  node -e "const s=require('net').createServer();s.listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})"
}

stop() {
  [ -f "$state/s3rver.pid" ] || return 0
  local pid; pid=$(cat "$state/s3rver.pid")
  kill -TERM -- "-$pid" 2>/dev/null || true
  for _ in $(seq 1 100); do
    kill -0 "$pid" 2>/dev/null || { rm -f "$state/s3rver.pid"; return 0; }
    sleep 0.1
  done
  kill -KILL -- "-$pid" 2>/dev/null || true
  rm -f "$state/s3rver.pid"
}

start() {
  [ -x "$bin" ] || { echo "s3rver not installed: run scripts/install-s3rver.sh" >&2; exit 1; }
  local port; port=$(free_port)
  rm -rf "$state/data"
  mkdir -p "$state/data"
  setsid -f bash -c 'echo $$ > "$0"; exec "$@"' "$state/s3rver.pid" \
    "$bin" -d "$state/data" -a 127.0.0.1 -p "$port" -s --configure-bucket "$bucket" \
    </dev/null >"$state/s3rver.log" 2>&1
  local code=000
  for _ in $(seq 1 300); do
    code=$(curl -s -o /dev/null -m 5 -w '%{http_code}' "http://127.0.0.1:$port/" || true)
    [ -n "$code" ] && [ "$code" != 000 ] && break
    sleep 0.1
  done
  if [ "$code" = 000 ]; then
    echo "s3rver did not answer on port $port; log:" >&2; cat "$state/s3rver.log" >&2; stop; exit 1
  fi
  echo "s3rver on http://127.0.0.1:$port (pid $(cat "$state/s3rver.pid"))" >&2
  # s3rver's fixed credentials
  echo "s3://$bucket/locks?endpoint=http://127.0.0.1:$port&region=us-east-1&pathStyle=true&accessKeyId=S3RVER&secretAccessKey=S3RVER"
}

case "$cmd" in
  start) stop; start ;;
  stop) stop ;;
  *) usage ;;
esac
