#!/usr/bin/env bash
# Airflow: the BashOperator's bash_command (read from the DAG file, without Airflow) run by two
# "deployments" at once against one PostgreSQL lock: the first runs the export; the second exits
# with the operator's skip_on_exit_code (Airflow: task skipped) without running it.
source "$(dirname "$0")/../lib/test-lib.sh"
dag="$recipe_dir/nightly_export.py"
bash_command=$(python3 "$repo/recipes/lib/extract.py" airflow "$dag" export bash_command)
skip=$(python3 "$repo/recipes/lib/extract.py" airflow "$dag" export skip_on_exit_code)
[ "$skip" = 99 ] || fail "skip_on_exit_code is '$skip'"
# the job at /opt/jobs/export: a stand-in under this test's directory
mkdir -p "$work/jobs" && ln -s "$repo/recipes/lib/standin-job" "$work/jobs/export"
cmd="${bash_command//\/opt\/jobs\/export/$work/jobs/export}"
export LATCHKEY_URI="$RECIPES_PG_URI"

hold deployment-a
STANDIN_NAME=deployment-a start_bg deployment-a bash -c "$cmd"
await_start deployment-a
STANDIN_NAME=deployment-b run_fg deployment-b bash -c "$cmd" >/dev/null
expect_status deployment-b "$skip"
expect_one_line deployment-b "^latchkey: lock 'nightly-export' is busy: held by .* \(token [0-9]+\)$"
never_started deployment-b
release deployment-a
[ "$(finish deployment-a)" = 0 ] || fail "deployment A's task exited $(cat "$work/deployment-a.rc"): $(cat "$work/deployment-a.err")"
note "deployment B's task exited $skip (skipped) without running the export"
