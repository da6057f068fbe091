#!/usr/bin/env bash
# Installs s3rver (npm s3rver@3.7.1, a fake S3 server for Node) into <repo>/.tools/s3rver: the store the
# S3 backend's probe must refuse (it answers 200 to a second If-None-Match: * create). Idempotent.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
dir="$root/.tools/s3rver"
version=3.7.1
if [ -x "$dir/node_modules/.bin/s3rver" ] \
   && grep -q "\"version\": \"$version\"" "$dir/node_modules/s3rver/package.json" 2>/dev/null; then
  exit 0
fi
command -v npm >/dev/null || { echo "install-s3rver: npm is needed (apt-get install nodejs npm)" >&2; exit 1; }
mkdir -p "$dir"
cd "$dir"
[ -f package.json ] || echo '{"name":"latchkey-s3rver","private":true}' > package.json
npm install --no-audit --no-fund --loglevel=error "s3rver@$version" >&2
"$dir/node_modules/.bin/s3rver" --version >&2
