#!/usr/bin/env bash
# cron: two overlapping runs of the crontab's line (as cron runs it: /bin/sh -c, HOME set), on two
# "hosts" sharing one PostgreSQL lock. One runs; the other exits 0 at once with one log line
# naming the holder, and its job never starts.
source "$(dirname "$0")/../lib/test-lib.sh"
line=$(grep -v '^#' "$recipe_dir/crontab" | grep -v '^$')
cmd=$(echo "$line" | cut -d' ' -f6-)  # after the five time fields
export HOME="$work/home" LATCHKEY_URI="$RECIPES_PG_URI"
mkdir -p "$HOME/bin" "$HOME/jobs" "$HOME/log"
ln -s "$repo/latchkey" "$HOME/bin/latchkey"
ln -s "$repo/recipes/lib/standin-job" "$HOME/jobs/export"

hold first
STANDIN_NAME=first start_bg first sh -c "$cmd"
await_start first
STANDIN_NAME=second run_fg second sh -c "$cmd" >/dev/null
expect_status second 0
never_started second
log="$HOME/log/export.log"
[ "$(wc -l <"$log")" = 1 ] && grep -Eq "^latchkey: lock 'nightly-export' is busy: held by .* \(token [0-9]+\)$" "$log" \
  || fail "the skipped run must log one line naming the holder; the log: $(cat "$log")"
release first
[ "$(finish first)" = 0 ] || fail "the first run exited $(cat "$work/first.rc")"
[ "$(wc -l <"$log")" = 1 ] || fail "the log must hold only the skip line: $(cat "$log")"
no_overlap
note "overlapping run skipped with exit 0 and one log line: $(cat "$log")"
