#!/usr/bin/env bash
# A throw-away PostgreSQL server on 127.0.0.1 for tests and benchmarks.
#   postgres.sh start <dir>    initdb into <dir>/data, start on a free port, create role and
#                              database `latchkey` (password auth over TCP), plus a role
#                              `latchkey_peer` without grants (same password); prints the URI LAST:
#                              postgres://latchkey:<password>@127.0.0.1:<port>/latchkey
#   postgres.sh restart <dir>  fast restart, same port and data (tests of a server restart)
#   postgres.sh pause <dir>    fast shutdown keeping the data; `resume <dir>` starts it again
#   postgres.sh crash <dir>    immediate shutdown (pg_ctl -m immediate: every process is killed, no
#                              checkpoint, crash recovery at the next start); `resume <dir>` starts it
#   postgres.sh replica <primary-dir> <dir>
#                              a streaming standby of the server in <primary-dir> (pg_basebackup into
#                              <dir>/data, on a free port of its own, same roles and password); prints
#                              its URI LAST. `promote <dir>` makes it a primary (a new WAL timeline)
#   postgres.sh stop <dir>     fast shutdown, then removes <dir>
#   postgres.sh start <dir> --faketime
#                              as start, but the server runs under libfaketime (Debian's package;
#                              install-postgres.sh installs it): its clock_timestamp() and now() are
#                              real time plus the offset in <dir>/faketime, read at every call
#                              (monotonic clocks untouched). `clock <dir> <offset>` steps it, e.g.
#                              `+120s`, `-30s`, `+0` (tests of a server-clock step)
# PostgreSQL refuses to run as root, so as root the server runs as the `postgres` system user
# (created by the Debian package; see install-postgres.sh), which then owns <dir>.
set -euo pipefail
# shellcheck source=lib/faketime.sh
. "$(dirname "$0")/lib/faketime.sh"

cmd="${1:-}"; dir="${2:-}"; option="${3:-}"
if [ -z "$cmd" ] || [ -z "$dir" ]; then
  echo "usage: $0 start|restart|pause|crash|resume|promote|stop <state-dir> | start <state-dir> --faketime | clock <state-dir> <offset> | replica <primary-dir> <state-dir>" >&2; exit 2
fi

bindir=""
for d in /usr/lib/postgresql/*/bin; do [ -x "$d/initdb" ] && bindir="$d"; done
if [ -z "$bindir" ]; then
  echo "no PostgreSQL server binaries under /usr/lib/postgresql: run scripts/install-postgres.sh" >&2; exit 1
fi

as_server() {
  if [ "$(id -u)" -eq 0 ]; then
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

data="$dir/data"
case "$cmd" in
  start)
    mkdir -p "$dir"
    dir="$(cd "$dir" && pwd)"; data="$dir/data"
    if [ "$(id -u)" -eq 0 ]; then
      chown postgres: "$dir"
      runuser -u postgres -- test -w "$dir" || {
        echo "user postgres cannot write $dir (is a parent directory private to root?)" >&2; exit 1; }
    fi
    chmod 700 "$dir"
    port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()')"
    password="$(python3 -c 'import secrets; print(secrets.token_hex(16))')"
    as_server "$bindir/initdb" -D "$data" -U postgres --auth-local=trust --auth-host=scram-sha-256 \
      -E UTF8 --locale=C.UTF-8 >"$dir/initdb.log" 2>&1 || { cat "$dir/initdb.log" >&2; exit 1; }
    cat >>"$data/postgresql.conf" <<CONF
listen_addresses = '127.0.0.1'
port = $port
unix_socket_directories = '$dir'
max_connections = 200
log_min_messages = warning
CONF
    faketime=()
    if [ "$option" = "--faketime" ]; then
      # the server only (not psql, not the client); timeouts and waits keep the real monotonic clock
      faketime_env "$dir" scripts/install-postgres.sh || exit 1
    elif [ -n "$option" ]; then
      echo "unknown option '$option' (--faketime)" >&2; exit 2
    fi
    # own session: the server must not share the starting shell's process group or terminal
    as_server setsid -w "${faketime[@]}" "$bindir/pg_ctl" -D "$data" -l "$dir/server.log" -w -t 60 start >&2 \
      || { cat "$dir/server.log" >&2; exit 1; }
    psql_su=(as_server "$bindir/psql" -X -q -v ON_ERROR_STOP=1 -h "$dir" -p "$port" -U postgres -d postgres)
    "${psql_su[@]}" -c "CREATE ROLE latchkey LOGIN PASSWORD '$password'" >&2
    "${psql_su[@]}" -c "CREATE DATABASE latchkey OWNER latchkey" >&2
    # a second, unprivileged role (same password) for tests of permission errors
    "${psql_su[@]}" -c "CREATE ROLE latchkey_peer LOGIN PASSWORD '$password'" >&2
    # readiness by a real query over TCP with the new credentials
    PGPASSWORD="$password" "$bindir/psql" -X -q -At -h 127.0.0.1 -p "$port" -U latchkey -d latchkey \
      -c "SELECT 1" >/dev/null
    echo "$port" >"$dir/port"
    uri="postgres://latchkey:$password@127.0.0.1:$port/latchkey"
    ( umask 077; echo "$uri" >"$dir/uri" )
    echo "$uri"
    ;;
  restart)
    as_server setsid -w "$bindir/pg_ctl" -D "$data" -l "$dir/server.log" -w -t 60 -m fast restart >&2
    ;;
  pause)
    as_server "$bindir/pg_ctl" -D "$data" -w -t 60 -m fast stop >&2
    ;;
  replica)
    primary="$(cd "$dir" && pwd)"; dir="${3:-}"
    [ -n "$dir" ] || { echo "usage: $0 replica <primary-dir> <state-dir>" >&2; exit 2; }
    mkdir -p "$dir"
    dir="$(cd "$dir" && pwd)"; data="$dir/data"
    if [ "$(id -u)" -eq 0 ]; then chown postgres: "$dir"; fi
    chmod 700 "$dir"
    port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()')"
    as_server "$bindir/pg_basebackup" -h "$primary" -p "$(cat "$primary/port")" -U postgres -D "$data" -R -X stream -c fast \
      >"$dir/basebackup.log" 2>&1 || { cat "$dir/basebackup.log" >&2; exit 1; }
    cat >>"$data/postgresql.conf" <<CONF
port = $port
unix_socket_directories = '$dir'
CONF
    as_server setsid -w "$bindir/pg_ctl" -D "$data" -l "$dir/server.log" -w -t 60 start >&2 \
      || { cat "$dir/server.log" >&2; exit 1; }
    echo "$port" >"$dir/port"
    sed "s/127.0.0.1:$(cat "$primary/port")\//127.0.0.1:$port\//" "$primary/uri"
    ;;
  clock)
    faketime_step "$dir" "$option" || exit $?
    ;;
  promote)
    as_server "$bindir/pg_ctl" -D "$data" -w -t 60 promote >&2
    ;;
  crash)
    as_server "$bindir/pg_ctl" -D "$data" -w -t 60 -m immediate stop >&2
    ;;
  resume)
    as_server setsid -w "$bindir/pg_ctl" -D "$data" -l "$dir/server.log" -w -t 60 start >&2
    ;;
  stop)
    if [ -f "$data/postmaster.pid" ]; then
      as_server "$bindir/pg_ctl" -D "$data" -w -t 60 -m fast stop >&2 || true
    fi
    rm -rf "$dir"
    ;;
  *)
    echo "unknown command '$cmd' (start|restart|pause|crash|resume|replica|promote|clock|stop)" >&2; exit 2 ;;
esac
