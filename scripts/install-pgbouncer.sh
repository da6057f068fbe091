#!/usr/bin/env bash
# Makes sure the PgBouncer binary used by scripts/pgbouncer.sh exists (idempotent): Debian's package
# `pgbouncer` (1.18 on bookworm). The package's own service is never used (and without systemd, never
# started).
set -euo pipefail
if command -v pgbouncer >/dev/null 2>&1; then
  echo "pgbouncer present: $(pgbouncer --version | head -1)" >&2
  exit 0
fi
sudo_cmd=()
[ "$(id -u)" -ne 0 ] && sudo_cmd=(sudo)
"${sudo_cmd[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq pgbouncer >/dev/null
echo "pgbouncer installed: $(pgbouncer --version | head -1)" >&2
