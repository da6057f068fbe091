#!/usr/bin/env bash
# A throw-away PgBouncer on 127.0.0.1 in front of a PostgreSQL server, for the tests of poolers.
#   pgbouncer.sh start <dir> <postgres-uri>   config and log in <dir>, listens on a free port and
#       serves the URI's database twice: as <db> with pool_mode=transaction and pool_size=1 (one
#       server connection shared by every client: what breaks session state, deterministically),
#       and as <db>_session with pool_mode=session (each client keeps its server connection;
#       server_reset_query DISCARD ALL between clients). Same user and password as the URI (SCRAM).
#       Readiness by a real query through it; prints the transaction-pooling URI LAST:
#       postgres://<user>:<password>@127.0.0.1:<port>/<db>   (use <db>_session for session pooling)
#   pgbouncer.sh stop <dir>                   stops it and removes <dir>
# PgBouncer refuses to run as root, so as root it runs as the `postgres` system user, which then owns
# <dir> (as scripts/postgres.sh does).
set -euo pipefail

cmd="${1:-}"; dir="${2:-}"
if [ -z "$cmd" ] || [ -z "$dir" ]; then
  echo "usage: $0 start <state-dir> <postgres-uri> | stop <state-dir>" >&2; exit 2
fi
command -v pgbouncer >/dev/null || { echo "no pgbouncer binary: run scripts/install-pgbouncer.sh" >&2; exit 1; }

as_runner() {
  if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

case "$cmd" in
  start)
    uri="${3:-}"
    re='^postgres(ql)?://([^:@/]+):([^@/]+)@([^:/]+):([0-9]+)/([A-Za-z0-9_]+)$'
    [[ "$uri" =~ $re ]] || { echo "expected postgres://user:password@host:port/db, got a different URI" >&2; exit 2; }
    user="${BASH_REMATCH[2]}"; password="${BASH_REMATCH[3]}"; host="${BASH_REMATCH[4]}"
    port="${BASH_REMATCH[5]}"; db="${BASH_REMATCH[6]}"
    mkdir -p "$dir"
    dir="$(cd "$dir" && pwd)"
    listen="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()')"
    cat >"$dir/pgbouncer.ini" <<CONF
[databases]
$db = host=$host port=$port dbname=$db pool_mode=transaction pool_size=1
${db}_session = host=$host port=$port dbname=$db pool_mode=session

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = $listen
unix_socket_dir =
auth_type = scram-sha-256
auth_file = $dir/userlist.txt
pidfile = $dir/pgbouncer.pid
logfile = $dir/pgbouncer.log
max_client_conn = 200
default_pool_size = 20
CONF
    ( umask 077; printf '"%s" "%s"\n' "$user" "$password" >"$dir/userlist.txt" )
    if [ "$(id -u)" -eq 0 ]; then chown -R postgres: "$dir"; fi
    as_runner pgbouncer -d "$dir/pgbouncer.ini" >&2 || { cat "$dir/pgbouncer.log" >&2 2>/dev/null; exit 1; }
    # readiness by a real query through the pooler with the URI's credentials
    for _ in $(seq 1 100); do
      if PGPASSWORD="$password" PGCONNECT_TIMEOUT=2 psql -X -q -At -h 127.0.0.1 -p "$listen" -U "$user" -d "$db" \
          -c "SELECT 1" >/dev/null 2>&1; then
        echo "$listen" >"$dir/port"
        echo "postgres://$user:$password@127.0.0.1:$listen/$db"
        exit 0
      fi
      sleep 0.1
    done
    echo "pgbouncer did not answer on 127.0.0.1:$listen:" >&2
    cat "$dir/pgbouncer.log" >&2 2>/dev/null || true
    exit 1
    ;;
  stop)
    if [ -f "$dir/pgbouncer.pid" ]; then
      pid="$(cat "$dir/pgbouncer.pid")"
      kill -INT "$pid" 2>/dev/null || true   # SIGINT: immediate shutdown
      for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    fi
    rm -rf "$dir"
    ;;
  *)
    echo "unknown command '$cmd' (start|stop)" >&2; exit 2 ;;
esac
