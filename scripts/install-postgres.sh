#!/usr/bin/env bash
# Makes sure the PostgreSQL server binaries used by scripts/postgres.sh exist (idempotent).
# Debian's package `postgresql` brings them to /usr/lib/postgresql/<major>/bin; `libfaketime`
# (0.9.10) lets `postgres.sh start DIR --faketime` run a server whose clock the tests can step.
set -euo pipefail
# shellcheck source=lib/faketime.sh
. "$(dirname "$0")/lib/faketime.sh"
if ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 && [ -n "$(faketime_lib)" ]; then
  echo "postgresql server binaries present: $(ls -d /usr/lib/postgresql/*/bin | tail -1); libfaketime present" >&2
  exit 0
fi
sudo_cmd=()
[ "$(id -u)" -ne 0 ] && sudo_cmd=(sudo)
"${sudo_cmd[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq postgresql libfaketime >/dev/null
# the package starts a cluster of its own on port 5432; the tests never use it
ls /usr/lib/postgresql/*/bin/initdb >/dev/null
[ -n "$(faketime_lib)" ]
echo "postgresql installed: $(ls -d /usr/lib/postgresql/*/bin | tail -1); libfaketime: $(faketime_lib)" >&2
