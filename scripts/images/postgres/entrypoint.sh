#!/bin/sh
# PostgreSQL 15 from Debian's packages with the official image's interface, as Testcontainers'
# PostgreSQLContainer drives it: POSTGRES_USER / POSTGRES_PASSWORD / POSTGRES_DB, the *.sql files of
# /docker-entrypoint-initdb.d run once on a temporary server, then the server proper; each logs
# "database system is ready to accept connections" (Testcontainers waits for the second).
# Arguments are the server's ("postgres -c max_connections=200"). Runs as user postgres (the image's USER).
set -eu
bin=/usr/lib/postgresql/15/bin
export PGDATA=/var/lib/postgresql/data
user="${POSTGRES_USER:-postgres}"; db="${POSTGRES_DB:-$user}"
[ "${1:-}" = postgres ] && shift
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  : "${POSTGRES_PASSWORD:?set POSTGRES_PASSWORD}"
  pwfile="$(mktemp)"; printf '%s\n' "$POSTGRES_PASSWORD" >"$pwfile"
  "$bin/initdb" -D "$PGDATA" -U "$user" --pwfile="$pwfile" --auth-local=trust --auth-host=scram-sha-256 \
    -E UTF8 --locale=C.UTF-8 >/dev/null
  rm -f "$pwfile"
  # /tmp: the package's socket directory (/run/postgresql) is made at boot, not in the image
  printf "listen_addresses = '*'\nunix_socket_directories = '/tmp'\n" >>"$PGDATA/postgresql.conf"
  # clients come through the bridge, not loopback: password auth from anywhere
  echo "host all all all scram-sha-256" >>"$PGDATA/pg_hba.conf"
  "$bin/pg_ctl" -D "$PGDATA" -o "-c listen_addresses=''" -w start
  psql() { "$bin/psql" -X -q -v ON_ERROR_STOP=1 -h /tmp -U "$user" "$@"; }
  [ "$db" = postgres ] || psql -d postgres -c "CREATE DATABASE \"$db\""
  for f in /docker-entrypoint-initdb.d/*.sql; do
    [ -e "$f" ] && psql -d "$db" -f "$f"
  done
  "$bin/pg_ctl" -D "$PGDATA" -m fast -w stop
fi
exec "$bin/postgres" -D "$PGDATA" "$@"
