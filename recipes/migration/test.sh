#!/usr/bin/env bash
# Migration: the nested command holds the old lock (PostgreSQL) and the new one (S3) for the whole
# run; a runner still on the old lock alone, and one already on the new lock alone, are both
# refused (75) while it runs; the job sees the new lock's LATCHKEY_* values (the inner run's).
source "$(dirname "$0")/../lib/test-lib.sh"
standin meltano
export OLD_LOCK_URI="$RECIPES_PG_URI" NEW_LOCK_URI="$RECIPES_S3_URI" STATE_ID="dev:tap-x-to-target-y-migrating"

hold both
STANDIN_NAME=both start_bg both sh "$recipe_dir/both-locks.sh"
await_start both
case "$(job_env both LATCHKEY_BACKEND)" in s3://*) ;; *) fail "the job must see the inner (new) lock: $(cat "$RECIPE_EVENTS.both.env")";; esac
STANDIN_NAME=old-only run_fg old-only latchkey run --uri "$OLD_LOCK_URI" --key "$STATE_ID" -- meltano run tap-x target-y >/dev/null
expect_status old-only 75
STANDIN_NAME=new-only run_fg new-only latchkey run --uri "$NEW_LOCK_URI" --key "$STATE_ID" -- meltano run tap-x target-y >/dev/null
expect_status new-only 75
never_started old-only; never_started new-only
release both
[ "$(finish both)" = 0 ] || fail "the nested run exited $(cat "$work/both.rc"): $(cat "$work/both.err")"
note "holding both locks: a run on either lock alone was refused (75)"
