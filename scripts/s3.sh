#!/usr/bin/env bash
# An S3-compatible server on free loopback ports, for tests and benchmarks: S3Proxy 4.1.0 in front
# of Azurite (jclouds provider azureblob-sdk), where conditional PUT (If-None-Match: *, If-Match) and
# conditional DELETE are atomic.
#   scripts/s3.sh start <stateDir>            Azurite + S3Proxy; prints the s3:// lock URI as the LAST line
#   scripts/s3.sh start-transient <stateDir>  S3Proxy alone on its in-memory "transient" provider, which
#                                             checks preconditions but NOT atomically (for the test that
#                                             shows the TCK catches a non-atomic store)
#   scripts/s3.sh stop <stateDir>             stops whatever start started, and waits until it is gone
# Run scripts/install-s3proxy.sh first.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/.." && pwd)"
jar="$root/.tools/s3proxy/s3proxy-4.1.0-jar-with-dependencies.jar"
bucket=latchkey
# test-only credentials of the local proxy (it listens on 127.0.0.1 only)
access=latchkey-test
secret=latchkey-test-secret
azkey='Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=='

usage() { echo "usage: $0 start|start-transient|stop <stateDir>" >&2; exit 2; }
[ $# -eq 2 ] || usage
cmd=$1
state="$(mkdir -p "$2" && cd "$2" && pwd)"

free_port() {
  node -e "const s=require('net').createServer();s.listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})"
}

stop_proxy() {
  [ -f "$state/s3proxy.pid" ] || return 0
  local pid; pid=$(cat "$state/s3proxy.pid")
  kill -TERM -- "-$pid" 2>/dev/null || true
  for _ in $(seq 1 100); do
    kill -0 "$pid" 2>/dev/null || { rm -f "$state/s3proxy.pid"; return 0; }
    sleep 0.1
  done
  kill -KILL -- "-$pid" 2>/dev/null || true
  rm -f "$state/s3proxy.pid"
}

stop_all() {
  stop_proxy
  [ -d "$state/azurite" ] && bash "$here/azurite.sh" stop "$state/azurite"
  return 0
}

# s3 <method> <path> [curl args…]: a SigV4-signed request to the proxy; prints the HTTP status.
# S3Proxy insists on x-amz-content-sha256, which curl's --aws-sigv4 does not send by itself.
s3() {
  local method=$1 path=$2; shift 2
  curl -s -o /dev/null -m 10 -w '%{http_code}' -X "$method" --aws-sigv4 "aws:amz:us-east-1:s3" \
    --user "$access:$secret" -H 'x-amz-content-sha256: UNSIGNED-PAYLOAD' "$@" "http://127.0.0.1:$port$path" || true
}

start() {
  local provider=$1
  [ -s "$jar" ] || { echo "s3proxy not installed: run scripts/install-s3proxy.sh" >&2; exit 1; }
  port=$(free_port)
  {
    echo "s3proxy.endpoint=http://127.0.0.1:$port"
    echo "s3proxy.authorization=aws-v2-or-v4"
    echo "s3proxy.identity=$access"
    echo "s3proxy.credential=$secret"
    echo "jclouds.provider=$provider"
    if [ "$provider" = azureblob-sdk ]; then
      local azport; azport=$(cat "$state/azurite/port")
      echo "jclouds.identity=devstoreaccount1"
      echo "jclouds.credential=$azkey"
      echo "jclouds.endpoint=http://127.0.0.1:$azport/devstoreaccount1"
    else
      echo "jclouds.identity=unused"
      echo "jclouds.credential=unused"
    fi
  } > "$state/s3proxy.properties"
  setsid -f bash -c 'echo $$ > "$0"; exec "$@"' "$state/s3proxy.pid" \
    java -Xmx256m -XX:+UseSerialGC -jar "$jar" --properties "$state/s3proxy.properties" \
    </dev/null >"$state/s3proxy.log" 2>&1
  local code=000
  for _ in $(seq 1 1200); do
    code=$(s3 GET /)
    [ -n "$code" ] && [ "$code" != 000 ] && break
    sleep 0.1
  done
  if [ "$code" != 200 ]; then
    echo "s3proxy did not answer on port $port (HTTP $code); log:" >&2; cat "$state/s3proxy.log" >&2; stop_all; exit 1
  fi
  code=$(s3 PUT "/$bucket")
  case "$code" in
    200|409) ;;
    *) echo "creating bucket $bucket failed: HTTP $code" >&2; cat "$state/s3proxy.log" >&2; stop_all; exit 1 ;;
  esac
  echo "s3proxy ($provider) on http://127.0.0.1:$port (pid $(cat "$state/s3proxy.pid"))" >&2
  echo "s3://$bucket/locks?endpoint=http://127.0.0.1:$port&region=us-east-1&pathStyle=true&accessKeyId=$access&secretAccessKey=$secret"
}

case "$cmd" in
  start)
    stop_all
    bash "$here/azurite.sh" start "$state/azurite" >/dev/null
    start azureblob-sdk
    ;;
  start-transient)
    stop_all
    start transient
    ;;
  stop) stop_all ;;
  *) usage ;;
esac
