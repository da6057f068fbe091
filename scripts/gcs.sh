#!/usr/bin/env bash
# The project's own GCS JSON-API test server (dev.latchkey.gcs.testserver.GcsTestServer, JDK only)
# as a separate process on a free loopback port, for tests and benchmarks that need GCS outside the
# test JVM (e.g. several `latchkey run` processes). No GCS emulator with working generation
# preconditions can be installed here; see the GCS section of README.md.
#   scripts/gcs.sh start <stateDir>   starts it with bucket "latchkey"; prints the gs:// lock URI as the LAST line
#   scripts/gcs.sh stop <stateDir>    stops it and waits until it is gone
# Like GCS, it takes at most one write per second to one object name (429 rateLimitExceeded beyond);
# LATCHKEY_GCS_OBJECT_WRITE_INTERVAL_MS sets that interval (default 1000; 0 turns the limit off).
# Builds nothing: needs lock-gcs/target/test-classes (mvn -pl lock-gcs test-compile).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/.." && pwd)"
classes="$root/lock-gcs/target/test-classes"
main=dev.latchkey.gcs.testserver.GcsTestServer
bucket=latchkey
interval_ms=${LATCHKEY_GCS_OBJECT_WRITE_INTERVAL_MS:-1000}
[[ $interval_ms =~ ^[0-9]+$ ]] || { echo "LATCHKEY_GCS_OBJECT_WRITE_INTERVAL_MS must be a whole number of milliseconds, got '$interval_ms'" >&2; exit 2; }

usage() { echo "usage: $0 start|stop <stateDir>" >&2; exit 2; }
[ $# -eq 2 ] || usage
cmd=$1
state="$(mkdir -p "$2" && cd "$2" && pwd)"

stop() {
  [ -f "$state/gcs.pid" ] || return 0
  local pid; pid=$(cat "$state/gcs.pid")
  kill -TERM -- "-$pid" 2>/dev/null || true
  for _ in $(seq 1 100); do
    kill -0 "$pid" 2>/dev/null || { rm -f "$state/gcs.pid" "$state/port"; return 0; }
    sleep 0.1
  done
  kill -KILL -- "-$pid" 2>/dev/null || true
  rm -f "$state/gcs.pid" "$state/port"
}

start() {
  if [ ! -f "$classes/dev/latchkey/gcs/testserver/GcsTestServer.class" ]; then
    echo "GCS test server not built: run 'mvn -pl lock-gcs test-compile' first (missing $classes)" >&2
    exit 1
  fi
  stop
  rm -f "$state/port"
  # the server picks a free port itself (no race with other processes) and writes it to $state/port
  setsid -f bash -c 'echo $$ > "$0"; exec "$@"' "$state/gcs.pid" \
    java -Xmx128m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Dsun.net.httpserver.nodelay=true \
    -cp "$classes" "$main" "--object-write-interval-ms=$interval_ms" "$state/port" "$bucket" \
    </dev/null >"$state/gcs.log" 2>&1
  local code=000 port=
  for _ in $(seq 1 600); do
    if [ -z "$port" ] && [ -s "$state/port" ]; then port=$(cat "$state/port"); fi
    if [ -n "$port" ]; then
      # a real request: the bucket must answer as GCS would
      code=$(curl -s -o /dev/null -m 5 -w '%{http_code}' "http://127.0.0.1:$port/storage/v1/b/$bucket" || true)
      [ "$code" = 200 ] && break
    fi
    if [ -f "$state/gcs.pid" ] && ! kill -0 "$(cat "$state/gcs.pid")" 2>/dev/null; then
      echo "GCS test server exited; log:" >&2; cat "$state/gcs.log" >&2; exit 1
    fi
    sleep 0.1
  done
  if [ "$code" != 200 ]; then
    echo "GCS test server did not answer (last status $code); log:" >&2; cat "$state/gcs.log" >&2
    stop; exit 1
  fi
  echo "gs://$bucket/locks?endpoint=http://127.0.0.1:$port&project=test"
}

case "$cmd" in
  start) start ;;
  stop) stop ;;
  *) usage ;;
esac
