#!/usr/bin/env bash
# Installs everything the test suite needs on a fresh machine (idempotent): each backend's
# scripts/install-<name>.sh. Safe to run again; does nothing that is already done.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
for f in "$here"/install-*.sh; do
  [ -e "$f" ] || continue
  echo "== $(basename "$f")" >&2
  bash "$f"
done
