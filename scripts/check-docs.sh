#!/usr/bin/env bash
# Checks the docs (scripts/check-docs.py says what exactly): every relative link and #anchor of
# README.md and docs/ resolves, every docs/ page is reachable from README.md, and every `sh` block
# of the docs runs (in a scratch directory, on a scratch file:// LATCHKEY_URI). Fails naming FILE:LINE.
# Conventions for writers: the top of docs/README.md.
set -euo pipefail
cd "$(dirname "$0")/.."
# build the launcher's jar first if needed (CI has built it by now), so no block pays for the build
[[ " $* " == *" --links-only "* ]] || ./latchkey backends >/dev/null
exec python3 scripts/check-docs.py "$@"
