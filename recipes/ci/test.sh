#!/usr/bin/env bash
# CI: the GitHub Actions step and the GitLab CI job's script (read from the YAML files), run at
# once against one PostgreSQL lock (advisory mode). The GitHub deploy holds the lock; the GitLab
# one is seen waiting for it in the server (pg_locks: an advisory lock not granted), starts only
# after the first deploy ended, and both succeed: the deploys never overlap.
source "$(dirname "$0")/../lib/test-lib.sh"
step=$(python3 "$repo/recipes/lib/extract.py" gha-run "$recipe_dir/github-actions.yml" "Deploy under the production lock")
job=$(python3 "$repo/recipes/lib/extract.py" gitlab-script "$recipe_dir/gitlab-ci.yml" deploy-production)
export LATCHKEY_URI="$RECIPES_PG_URI"
mkdir -p "$work/checkout" && cd "$work/checkout"
ln -s "$repo/recipes/lib/standin-job" deploy.sh
waiting() { never_started gitlab; [ "$(psql "$RECIPES_PG_URI" -X -At -c "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted")" -gt 0 ]; }

hold github
STANDIN_NAME=github GITHUB_SHA=c0ffee1 start_bg github bash -e -c "$step"
await_start github
STANDIN_NAME=gitlab CI_COMMIT_SHA=c0ffee2 start_bg gitlab sh -e -c "$job"
await "the GitLab deploy to wait for the lock in PostgreSQL" waiting
never_started gitlab
release github
[ "$(finish github)" = 0 ] || fail "the GitHub step exited $(cat "$work/github.rc"): $(cat "$work/github.err")"
[ "$(finish gitlab)" = 0 ] || fail "the GitLab job exited $(cat "$work/gitlab.rc"): $(cat "$work/gitlab.err")"
[ "$(cat "$RECIPE_EVENTS")" = "$(printf 'start github\nend github\nstart gitlab\nend gitlab')" ] \
  || fail "the deploys overlapped or one is missing: $(tr '\n' ' ' <"$RECIPE_EVENTS")"
[ "$(cat "$RECIPE_EVENTS.gitlab.args")" = c0ffee2 ] || fail "deploy.sh did not get the commit"
[ "$(job_env gitlab LATCHKEY_TOKEN)" -gt "$(job_env github LATCHKEY_TOKEN)" ] || fail "the second deploy's token is not higher"
note "the GitLab deploy waited in PostgreSQL while the GitHub one ran, then ran after it"
