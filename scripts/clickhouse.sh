#!/usr/bin/env bash
# Starts or stops a throw-away ClickHouse server (libchdb.so driven by scripts/clickhouse/chdb-server.c)
# serving the real HTTP interface on a free 127.0.0.1 port.
#   clickhouse.sh start DIR   data and log in DIR; prints the lock URI as the LAST stdout line
#   clickhouse.sh stop DIR    kills that server and removes DIR
# User `default`, empty password. Readiness is a real `GET /ping`: this server dies on a malformed
# request, so never probe its port with a bare TCP connection.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
tools="$(cd "$here/.." && pwd)/.tools/chdb"
lib="$tools/node_modules/@chdb/lib-linux-x64-gnu/libchdb.so"
launcher="$tools/chdb-server"

usage() { echo "usage: $0 start|stop DIR" >&2; exit 2; }
[ $# -eq 2 ] || usage
cmd="$1"
dir="$2"

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

case "$cmd" in
  start)
    if [ ! -f "$lib" ] || [ ! -x "$launcher" ]; then bash "$here/install-clickhouse.sh"; fi
    mkdir -p "$dir/data"
    dir="$(cd "$dir" && pwd)"
    for attempt in 1 2 3; do
      port="$(free_port)"
      # The query starts the HTTP listener, then keeps the process alive: one row a second, forever.
      setsid -f "$launcher" "$lib" --path="$dir/data" --listen_host=127.0.0.1 --http_port="$port" \
        --query="SYSTEM START LISTEN HTTP; SELECT sleepEachRow(1) FROM system.numbers SETTINGS max_block_size = 1 FORMAT Null" \
        </dev/null >"$dir/server.log" 2>&1
      # setsid -f does not report the child's pid: find it by its unique --path argument.
      pid=""
      for _ in $(seq 1 50); do
        pid="$(pgrep -f -- "--path=$dir/data " | head -n1 || true)"
        [ -n "$pid" ] && break
        sleep 0.1
      done
      [ -n "$pid" ] || { echo "clickhouse did not start; log:" >&2; cat "$dir/server.log" >&2; exit 1; }
      echo "$pid" >"$dir/pid"
      echo "$port" >"$dir/port"
      for _ in $(seq 1 300); do
        if [ "$(curl -s --max-time 2 "http://127.0.0.1:$port/ping" || true)" = "Ok." ] && kill -0 "$pid" 2>/dev/null; then
          curl -sfS --max-time 10 "http://127.0.0.1:$port/" --data-binary "CREATE DATABASE IF NOT EXISTS latchkey" >&2
          echo "clickhouse://default@127.0.0.1:$port/latchkey"
          exit 0
        fi
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
      done
      echo "clickhouse (attempt $attempt, port $port) did not answer /ping; log:" >&2
      tail -n 20 "$dir/server.log" >&2 || true
      kill "$pid" 2>/dev/null || true
    done
    exit 1
    ;;
  stop)
    [ -d "$dir" ] || exit 0
    dir="$(cd "$dir" && pwd)"
    if [ -f "$dir/pid" ]; then
      pid="$(cat "$dir/pid")"
      # Only kill the process if it is still our server (the pid may have been reused).
      if tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q -- "--path=$dir/data "; then
        kill "$pid" 2>/dev/null || true
        for _ in $(seq 1 100); do
          [ -d "/proc/$pid" ] && [ "$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null)" != Z ] || break
          sleep 0.1
        done
        if [ -d "/proc/$pid" ] && [ "$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null)" != Z ]; then
          kill -9 "$pid" 2>/dev/null || true
        fi
      fi
    fi
    rm -rf "$dir"
    ;;
  *) usage ;;
esac
