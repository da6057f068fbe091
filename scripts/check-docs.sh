#!/usr/bin/env bash
# Checks the docs (scripts/check-docs.py says what exactly): every relative link and #anchor of
# README.md and docs/ resolves, every docs/ page is reachable from README.md, and every `sh` block
# of the docs runs (in a scratch directory, on a scratch file:// LATCHKEY_URI). Fails naming FILE:LINE.
# First, every Python program of scripts/ must compile.
# Conventions for writers: the top of docs/README.md.
set -euo pipefail
cd "$(dirname "$0")/.."
# build the launcher's jar first if needed (CI has built it by now), so no block pays for the build
[[ " $* " == *" --links-only "* ]] || ./latchkey backends >/dev/null
# scripts/*.py compile: check-artifacts.py otherwise runs only after a deploy (compile() writes no .pyc)
python3 -c 'import sys; [compile(open(f).read(), f, "exec") for f in sys.argv[1:]]' scripts/*.py
exec python3 scripts/check-docs.py "$@"
