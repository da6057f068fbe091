#!/usr/bin/env bash
# The whole test suite on a fresh machine: install the servers' software, model-check the lock
# protocols (scripts/model-check.sh), then mvn verify, then the out-of-tree example (examples/lock-redis/test.sh).
# Each backend's tests start (and stop) their own server through scripts/<name>.sh, or use the
# server named by LATCHKEY_TEST_<NAME>_URI when set.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
# the protocol models first: a minute or three, and a broken protocol fails before the long suite
bash scripts/model-check.sh
mvn -B -ntp verify "$@"

# the out-of-tree backend example, on its own POM against the installed kit (~4 min)
bash examples/lock-redis/test.sh
