#!/usr/bin/env bash
# Runs every recipe of docs/pipeline-runners.md against real servers: checks that the page shows
# each snippet exactly as its test runs it, starts PostgreSQL (scripts/postgres.sh) and S3
# (scripts/s3.sh: S3Proxy in front of Azurite), runs recipes/*/test.sh one after the other, and
# stops the servers. A server that does not start fails the run (nothing is skipped).
#   scripts/recipes.sh [RECIPE…]     e.g. scripts/recipes.sh cron fencing-token (default: all)
# Needs what scripts/install.sh installs, Java 17+ and psql; builds lock-cli's jar if it is stale.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
started=$SECONDS
state="$root/.run/recipes"
rm -rf "$state" && mkdir -p "$state"
export RECIPES_WORK="$state/work"

stop_servers() {
  bash scripts/s3.sh stop "$state/s3" >/dev/null 2>&1 || echo "recipes: WARNING: stopping S3 failed" >&2
  bash scripts/postgres.sh stop "$state/pg" >/dev/null 2>&1 || echo "recipes: WARNING: stopping PostgreSQL failed" >&2
}
trap stop_servers EXIT

python3 recipes/lib/check-docs.py
command -v psql >/dev/null || { echo "recipes: psql is not installed (the fencing-token recipe writes through it)" >&2; exit 1; }
./latchkey backends >/dev/null  # builds the jar now, once, if it is missing or stale

# both servers at once: each takes seconds, mostly waiting
bash scripts/postgres.sh start "$state/pg" >"$state/pg.uri" 2>"$state/pg.log" & pg=$!
bash scripts/s3.sh start "$state/s3" >"$state/s3.uri" 2>"$state/s3.log" & s3=$!
wait $pg || { echo "recipes: PostgreSQL did not start:" >&2; cat "$state/pg.log" >&2; exit 1; }
wait $s3 || { echo "recipes: S3 did not start:" >&2; cat "$state/s3.log" >&2; exit 1; }
RECIPES_PG_URI="$(tail -n 1 "$state/pg.uri")"
RECIPES_S3_URI="$(tail -n 1 "$state/s3.uri")"
export RECIPES_PG_URI RECIPES_S3_URI
echo "recipes: servers up after $((SECONDS - started)) s" >&2

if [ $# -gt 0 ]; then names=("$@"); else
  names=(); for t in recipes/*/test.sh; do names+=("$(basename "$(dirname "$t")")"); done
fi
failed=()
for name in "${names[@]}"; do
  [ -f "recipes/$name/test.sh" ] || { echo "recipes: no recipe '$name' (recipes/$name/test.sh)" >&2; exit 2; }
  t0=$SECONDS
  if bash "recipes/$name/test.sh"; then
    echo "PASS $name ($((SECONDS - t0)) s)" >&2
  else
    echo "FAIL $name ($((SECONDS - t0)) s)" >&2
    failed+=("$name")
  fi
done
echo "recipes: ${#names[@]} run, ${#failed[@]} failed${failed[*]:+: ${failed[*]}}; $((SECONDS - started)) s in all" >&2
[ ${#failed[@]} -eq 0 ]
