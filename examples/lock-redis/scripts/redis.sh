#!/usr/bin/env bash
# A throw-away Redis server on 127.0.0.1 for the example's tests.
#   redis.sh start <dir>   writes <dir>/redis.conf, starts redis-server on a free port with a random
#                          password and the data in <dir>/data; prints the URI LAST:
#                          redis://:<password>@127.0.0.1:<port>/0
#   redis.sh crash <dir>   SIGKILL: no shutdown, no final save; `resume <dir>` starts it again
#                          (same port, password and data), replaying the append-only file
#   redis.sh resume <dir>
#   redis.sh stop <dir>    SIGTERM (Redis then fsyncs its append-only file and exits), removes <dir>
# Persistence (README.md, "What a single Redis primary guarantees"): the append-only file on, fsynced
# before every write is acknowledged (appendfsync always), no RDB snapshots (the AOF is the one
# durable copy). So a write this server acknowledged survives a crash of the process and of the
# machine, which the lock's fencing tokens and its "versions never repeat" rule rest on.
set -euo pipefail

cmd="${1:-}"; dir="${2:-}"
if [ -z "$cmd" ] || [ -z "$dir" ]; then
  echo "usage: $0 start|crash|resume|stop <state-dir>" >&2; exit 2
fi
command -v redis-server >/dev/null || {
  echo "no redis-server on PATH: apt-get install -y redis-server (examples/lock-redis/test.sh does)" >&2; exit 1; }

# waits until the server answers PING with the password over TCP (not just until the port opens)
await_ready() {
  local port password
  port="$(cat "$dir/port")"; password="$(cat "$dir/password")"
  for _ in $(seq 1 300); do
    if REDISCLI_AUTH="$password" redis-cli -h 127.0.0.1 -p "$port" --no-auth-warning ping 2>/dev/null | grep -q PONG; then
      return 0
    fi
    sleep 0.1
  done
  echo "redis-server did not answer on 127.0.0.1:$port within 30 s; its log:" >&2
  cat "$dir/server.log" >&2 || true
  exit 1
}

launch() {
  # own session: the server must not share the starting shell's process group or terminal
  setsid redis-server "$dir/redis.conf" </dev/null >/dev/null 2>&1
  await_ready
}

case "$cmd" in
  start)
    mkdir -p "$dir/data"
    dir="$(cd "$dir" && pwd)"
    chmod 700 "$dir"
    port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()')"
    password="$(python3 -c 'import secrets; print(secrets.token_hex(16))')"
    ( umask 077
      echo "$password" >"$dir/password"
      cat >"$dir/redis.conf" <<CONF
bind 127.0.0.1
port $port
protected-mode yes
requirepass $password
daemonize yes
pidfile $dir/redis.pid
logfile $dir/server.log
dir $dir/data
# durability: every acknowledged write is in the fsynced append-only file
appendonly yes
appendfsync always
# the AOF is the only copy: no RDB snapshots (a snapshot restored alone would roll versions back)
save ""
# a lease record is a few hundred bytes; never evict one to make room
maxmemory-policy noeviction
CONF
    )
    echo "$port" >"$dir/port"
    launch
    uri="redis://:$password@127.0.0.1:$port/0"
    ( umask 077; echo "$uri" >"$dir/uri" )
    echo "$uri"
    ;;
  crash)
    kill -KILL "$(cat "$dir/redis.pid")"
    # the pid file stays behind after SIGKILL; wait until the process is really gone
    while kill -0 "$(cat "$dir/redis.pid")" 2>/dev/null; do sleep 0.05; done
    rm -f "$dir/redis.pid"
    ;;
  resume)
    launch
    ;;
  stop)
    if [ -f "$dir/redis.pid" ]; then
      pid="$(cat "$dir/redis.pid")"
      kill -TERM "$pid" 2>/dev/null || true
      for _ in $(seq 1 300); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    fi
    rm -rf "$dir"
    ;;
  *)
    echo "unknown command '$cmd' (start|crash|resume|stop)" >&2; exit 2 ;;
esac
