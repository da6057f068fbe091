#!/usr/bin/env bash
# Meltano: the recipe's command lines against S3 (S3Proxy in front of Azurite), with a stand-in
# for `meltano` (Meltano is not installed here): the same latchkey command lines, the same
# arguments handed to `meltano`, a job that records what it sees instead of running a pipeline.
# Shows: a second run is refused (75) while one holds the state ID; --bypass-lock (Meltano's
# --force) runs beside the holder and leaves its lease alone; --force breaks the holder's lease and
# takes over with a higher token, and the broken run ends with 76; the lock object sits in the
# state bucket under locks/.
source "$(dirname "$0")/../lib/test-lib.sh"
standin meltano
uri="$RECIPES_S3_URI"                       # s3://BUCKET/locks?endpoint=…&pathStyle=true&…
export STATE_BUCKET="${uri#s3://}"; STATE_BUCKET="${STATE_BUCKET%%/*}"
export S3_LOCK_PARAMS="?${uri#*\?}"
export STATE_ID="dev:tap-x-to-target-y"     # Meltano's default state ID: <environment>:<tap>-to-<target>
held_lease() { latchkey status --uri "s3://$STATE_BUCKET/locks$S3_LOCK_PARAMS" --json "$STATE_ID" \
  | python3 -c 'import json,sys; print(json.load(sys.stdin)["leaseId"])'; }

hold first
STANDIN_NAME=first start_bg first sh "$recipe_dir/run.sh"
await_start first
[ "$(job_env first LATCHKEY_KEY)" = "$STATE_ID" ] || fail "LATCHKEY_KEY is not the state ID"
first_token=$(job_env first LATCHKEY_TOKEN)
[ "$first_token" -gt 0 ] || fail "S3 hands out fencing tokens, got '$first_token'"
! grep -q latchkey-test-secret "$RECIPE_EVENTS.first.env" || fail "the job's environment shows the secret key"
[ "$(cat "$RECIPE_EVENTS.first.args")" = "$(printf 'run\ntap-x\ntarget-y')" ] || fail "meltano got other arguments"
first_lease=$(job_env first LATCHKEY_LEASE_ID)

# a second scheduled run of the same state ID is refused, its meltano never started
STANDIN_NAME=second run_fg second sh "$recipe_dir/run.sh" >/dev/null
expect_status second 75
expect_one_line second "^latchkey: lock '$STATE_ID' is busy: held by .* \(token $first_token\)$"
never_started second

# Meltano's --force = --bypass-lock: runs beside the holder, whose lease stays
STANDIN_NAME=beside run_fg beside sh "$recipe_dir/run-beside.sh" >/dev/null
expect_status beside 0
expect_one_line beside "^latchkey: WARNING: --bypass-lock: running CMD without taking the lock '$STATE_ID'"
has_event "end beside" || fail "the bypassing run did not run"
[ ! -s "$RECIPE_EVENTS.beside.env" ] || fail "a bypassing run must see no LATCHKEY_* variables: $(cat "$RECIPE_EVENTS.beside.env")"
[ "$(cat "$RECIPE_EVENTS.beside.args")" = "$(printf 'run\n--force\ntap-x\ntarget-y')" ] || fail "meltano did not get its --force"
[ "$(held_lease)" = "$first_lease" ] || fail "--bypass-lock must leave the holder's lease alone"

# our --force: breaks the first run's lease and takes over, with a higher token
hold taker
STANDIN_NAME=taker start_bg taker sh "$recipe_dir/take-over.sh"
await_start taker
taker_token=$(job_env taker LATCHKEY_TOKEN)
[ "$taker_token" -gt "$first_token" ] || fail "the take-over's token $taker_token is not above $first_token"
grep -Eq "^latchkey: broke the lock '$STATE_ID' held by " "$work/taker.err" || fail "no 'broke the lock' line: $(cat "$work/taker.err")"
# the broken run learns it at its next heartbeat (TTL/3) or, as here, when its job ends: 76, never 0
release first
[ "$(finish first)" = 76 ] || fail "the broken run exited $(cat "$work/first.rc"), expected 76: $(cat "$work/first.err")"
release taker
[ "$(finish taker)" = 0 ] || fail "the take-over exited $(cat "$work/taker.rc"): $(cat "$work/taker.err")"

# the lock object sits in the state bucket, under its own prefix (key encoded: ':' is ~3A)
listing=$(curl -s -m 10 --aws-sigv4 "aws:amz:us-east-1:s3" --user "latchkey-test:latchkey-test-secret" \
  -H 'x-amz-content-sha256: UNSIGNED-PAYLOAD' \
  "$(echo "$uri" | sed -n 's/.*endpoint=\([^&]*\).*/\1/p')/$STATE_BUCKET?list-type=2&prefix=locks%2F")
grep -q '<Key>locks/dev~3Atap-x-to-target-y.lock</Key>' <<<"$listing" || fail "no lock object under locks/: $listing"
note "refused 75 while held; --bypass-lock ran beside (lease kept); --force took over (token $first_token -> $taker_token, the broken run exited 76)"
