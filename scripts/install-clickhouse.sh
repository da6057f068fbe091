#!/usr/bin/env bash
# Installs the ClickHouse test server (idempotent): libchdb.so — the ClickHouse engine as a shared
# library, from npm — into <repo>/.tools/chdb, and compiles the small launcher that runs it as an
# HTTP server (scripts/clickhouse/chdb-server.c). Needs npm and gcc.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
tools="$(cd "$here/.." && pwd)/.tools/chdb"
pkg='@chdb/lib-linux-x64-gnu'
version='26.7.3-stable.1' # pinned: the `latest` tag (26.5.x) rejects --listen_host
lib="$tools/node_modules/$pkg/libchdb.so"
mkdir -p "$tools"
if [ ! -f "$lib" ] || ! grep -q "\"version\": \"$version\"" "$tools/node_modules/$pkg/package.json" 2>/dev/null; then
  npm install --no-audit --no-fund --no-save --prefix "$tools" "$pkg@$version" >&2
fi
launcher="$tools/chdb-server"
src="$here/clickhouse/chdb-server.c"
if [ ! -x "$launcher" ] || [ "$src" -nt "$launcher" ]; then
  gcc -O2 -Wall -o "$launcher" "$src" -ldl
fi
echo "clickhouse: $lib" >&2
