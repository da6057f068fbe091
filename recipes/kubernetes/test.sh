#!/usr/bin/env bash
# Kubernetes: the CronJob container's command (read from cronjob.yaml), started by two "clusters"
# at once against one S3 bucket. The first runs /app/export; the second exits 0 without running it,
# with one stderr line naming the holder, which Forbid could not have done across clusters.
source "$(dirname "$0")/../lib/test-lib.sh"
mapfile -d '' -t cmd < <(python3 "$repo/recipes/lib/extract.py" k8s-command "$recipe_dir/cronjob.yaml")
[ "${cmd[0]}" = latchkey ] || fail "the container does not start latchkey"
app="${cmd[*]: -3:1}"                                  # /app/export: the image's job, a stand-in here
mkdir -p "$work/app" && ln -s "$repo/recipes/lib/standin-job" "$work/app/export"
cmd=("${cmd[@]/#$app/$work/app/export}")
export LATCHKEY_URI="$RECIPES_S3_URI"

hold cluster-a
STANDIN_NAME=cluster-a start_bg cluster-a "${cmd[@]}"
await_start cluster-a
STANDIN_NAME=cluster-b run_fg cluster-b "${cmd[@]}" >/dev/null
expect_status cluster-b 0
expect_one_line cluster-b "^latchkey: lock 'nightly-export' is busy: held by .* \(token [0-9]+\)$"
never_started cluster-b
release cluster-a
[ "$(finish cluster-a)" = 0 ] || fail "cluster A's run exited $(cat "$work/cluster-a.rc"): $(cat "$work/cluster-a.err")"
[ "$(cat "$RECIPE_EVENTS.cluster-a.args")" = "$(printf -- '--since\nyesterday')" ] || fail "/app/export got other arguments"
note "cluster B's run exited 0 without running the export: $(cat "$work/cluster-b.err")"
