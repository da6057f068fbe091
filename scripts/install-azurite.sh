#!/usr/bin/env bash
# Installs Azurite (the Azure Storage emulator, npm azurite@3.35.0: the newest that declares Node 20
# support) into <repo>/.tools/azurite. Idempotent: does nothing when that version is already there.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
dir="$root/.tools/azurite"
version=3.35.0
if [ -x "$dir/node_modules/.bin/azurite-blob" ] \
   && grep -q "\"version\": \"$version\"" "$dir/node_modules/azurite/package.json" 2>/dev/null; then
  exit 0
fi
command -v npm >/dev/null || { echo "install-azurite: npm is needed (apt-get install nodejs npm)" >&2; exit 1; }
mkdir -p "$dir"
cd "$dir"
[ -f package.json ] || echo '{"name":"latchkey-azurite","private":true}' > package.json
npm install --no-audit --no-fund --loglevel=error "azurite@$version" >&2
"$dir/node_modules/.bin/azurite-blob" --version >&2
