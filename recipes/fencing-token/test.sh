#!/usr/bin/env bash
# The token recipe against PostgreSQL (the lock in mode=lease, in its own schema of the same
# database as the store). Run "late" holds the lock and stalls before its write; run "taker", on
# another host, takes the lock over with --force and writes twice (same token: both accepted); then the late
# run's write arrives and is refused (exit 3), its latchkey exits 76, and the store keeps the
# taker's state and token. On a backend without tokens (advisory mode, fencing=false:
# LATCHKEY_TOKEN=0) the job refuses to write at all (exit 2).
source "$(dirname "$0")/../lib/test-lib.sh"
standin work                                     # the job's work before it writes its state
ln -s "$recipe_dir/write-state.sh" "$work/bin/write-state.sh"
export STATE_DB="$RECIPES_PG_URI"
psql "$STATE_DB" -X -q -v ON_ERROR_STOP=1 -f "$recipe_dir/schema.sql"
lock="$RECIPES_PG_URI?mode=lease&schema=recipe_fencing"
id=orders-to-warehouse
job='work && write-state.sh "$0" "{\"run\": \"$STANDIN_NAME\", \"part\": 1}" && write-state.sh "$0" "{\"run\": \"$STANDIN_NAME\", \"part\": 2}"'
stored() { psql "$STATE_DB" -X -At -c "SELECT fence || ' ' || (state->>'run') || ' ' || (state->>'part') FROM pipeline_state WHERE state_id = '$1'"; }

hold late
STANDIN_NAME=late start_bg late latchkey run --uri "$lock" --key "$id" --ttl 5m -- sh -c "$job" "$id"
await_start late
late_token=$(job_env late LATCHKEY_TOKEN)
# the taker runs on "another host": a job-slot directory of its own (on one host it would wait for
# the late run's job to end, and the late write could not happen)
mkdir -m 700 "$work/host-b"
XDG_RUNTIME_DIR="$work/host-b" STANDIN_NAME=taker run_fg taker latchkey run --uri "$lock" --key "$id" --force -- sh -c "$job" "$id" >/dev/null
expect_status taker 0
taker_token=$(job_env taker LATCHKEY_TOKEN)
[ "$taker_token" -gt "$late_token" ] || fail "the take-over's token $taker_token is not above $late_token"
[ "$(stored "$id")" = "$taker_token taker 2" ] || fail "the taker's two writes must both land: $(stored "$id")"

release late                                     # the stalled run wakes up and writes, late
[ "$(finish late)" = 76 ] || fail "the late run exited $(cat "$work/late.rc"), expected 76: $(cat "$work/late.err")"
grep -qx "write-state: refused the state of '$id' from token $late_token: a run with a newer token wrote it" "$work/late.err" \
  || fail "the late write was not refused: $(cat "$work/late.err")"
[ "$(stored "$id")" = "$taker_token taker 2" ] || fail "the late write changed the store: $(stored "$id")"

# no token, no protection: the job refuses to write rather than write unfenced
STANDIN_NAME=untokened run_fg untokened latchkey run --uri "$RECIPES_PG_URI?fencing=false" --key "$id-b" -- sh -c "$job" "$id-b" >/dev/null
expect_status untokened 2
[ "$(job_env untokened LATCHKEY_TOKEN)" = 0 ] || fail "fencing=false must hand out token 0"
expect_one_line untokened "^write-state: no fencing token \(LATCHKEY_TOKEN='0'\)"
[ -z "$(stored "$id-b")" ] || fail "a write without a token landed"
note "late write (token $late_token) refused after the take-over (token $taker_token); token 0 refused"
