#!/usr/bin/env bash
# Installs Azurite (the Azure Storage emulator, npm azurite@3.35.0: the newest that declares Node 20
# support) into <repo>/.tools/azurite, and Debian's `libfaketime` (0.9.10), which lets
# `azurite.sh start DIR --faketime` run a server whose clock the tests can step. Idempotent: does
# nothing when that version and the library are already there.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
dir="$root/.tools/azurite"
version=3.35.0
# shellcheck source=lib/faketime.sh
. "$(dirname "$0")/lib/faketime.sh"
if [ -z "$(faketime_lib)" ]; then
  sudo_cmd=()
  [ "$(id -u)" -ne 0 ] && sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq libfaketime >/dev/null
  [ -n "$(faketime_lib)" ]
  echo "libfaketime: $(faketime_lib)" >&2
fi
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
