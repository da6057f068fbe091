# Helpers for the recipes' tests (sourced by recipes/*/test.sh, which scripts/recipes.sh runs).
# Each test gets a fresh work directory, `latchkey` (the repository's launcher) and its stand-in
# jobs on PATH, an event log and a hold directory (see lib/standin-job). Waits are for conditions,
# bounded generously (AWAIT_SECONDS) so that a loaded machine slows a test down but never fails it.
set -euo pipefail

recipe_dir="$(cd "$(dirname "${BASH_SOURCE[1]}")" && pwd)"
recipe="$(basename "$recipe_dir")"
repo="$(cd "$recipe_dir/../.." && pwd)"
work="${RECIPES_WORK:?run the recipes through scripts/recipes.sh}/$recipe"
AWAIT_SECONDS=90
rm -rf "$work" && mkdir -p "$work/bin" "$work/hold"
ln -s "$repo/latchkey" "$work/bin/latchkey"
export PATH="$work/bin:$PATH"
export RECIPE_EVENTS="$work/events" RECIPE_HOLD="$work/hold"
: >"$RECIPE_EVENTS"
unset LATCHKEY_URI

fail() { echo "FAIL [$recipe]: $*" >&2; exit 1; }
note() { echo "  [$recipe] $*" >&2; }

# standin NAME: puts lib/standin-job on PATH under the command name NAME
standin() { ln -sf "$repo/recipes/lib/standin-job" "$work/bin/$1"; }

hold() { touch "$RECIPE_HOLD/$1"; }
release() { rm -f "$RECIPE_HOLD/$1"; }

# await DESCRIPTION CMD…: until CMD succeeds (polled every 50 ms), else fail
await() {
  local what=$1; shift
  local deadline=$((SECONDS + AWAIT_SECONDS))
  until "$@"; do
    [ "$SECONDS" -lt "$deadline" ] || fail "timed out after ${AWAIT_SECONDS}s waiting for: $what"
    sleep 0.05
  done
}
has_event() { grep -qx "$1" "$RECIPE_EVENTS"; }
# await_start NAME: until the background run NAME (see start_bg) has started its stand-in job of
# the same name; fails at once, with the run's stderr, if the run exits first
await_start() {
  local deadline=$((SECONDS + AWAIT_SECONDS))
  until has_event "start $1"; do
    [ ! -s "$work/$1.rc" ] || fail "run '$1' exited $(cat "$work/$1.rc") before its job started: $(cat "$work/$1.err")"
    [ "$SECONDS" -lt "$deadline" ] || fail "timed out after ${AWAIT_SECONDS}s waiting for run '$1' to start its job"
    sleep 0.05
  done
}

# start_bg ID CMD…: runs CMD in the background; its stdout, stderr and status go to $work/ID.{out,err,rc}
start_bg() {
  local id=$1; shift
  ( set +e; "$@" >"$work/$id.out" 2>"$work/$id.err"; echo $? >"$work/$id.rc" ) &
}
# finish ID: waits for a background run, prints its status
finish() {
  await "run '$1' to exit" test -s "$work/$1.rc"
  cat "$work/$1.rc"
}
# run_fg ID CMD…: runs CMD now, same files as start_bg; prints its status
run_fg() {
  local id=$1; shift
  set +e; "$@" >"$work/$id.out" 2>"$work/$id.err"; echo $? >"$work/$id.rc"; set -e
  cat "$work/$id.rc"
}

expect_status() { # ID WANT
  local got; got=$(cat "$work/$1.rc")
  [ "$got" = "$2" ] || fail "run '$1' exited $got, expected $2; its stderr: $(cat "$work/$1.err")"
}
# expect_one_line ID REGEX: the run's stderr is exactly one line, matching REGEX
expect_one_line() {
  local lines; lines=$(wc -l <"$work/$1.err")
  [ "$lines" = 1 ] && grep -Eq "$2" "$work/$1.err" \
    || fail "run '$1': expected one stderr line matching /$2/, got $lines: $(cat "$work/$1.err")"
}
# never_started NAME: the stand-in NAME did not run
never_started() { ! grep -q "^start $1\$" "$RECIPE_EVENTS" || fail "job '$1' ran, but it must not have"; }
# job_env NAME VAR: the value of VAR that stand-in NAME saw (empty if unset)
job_env() { sed -n "s/^$2=//p" "$RECIPE_EVENTS.$1.env"; }

# no_overlap: in the event log, no job started while another was running
no_overlap() {
  awk '/^start /{ if (running != "") { print "overlap: " $2 " started while " running " ran"; bad = 1 } running = $2 }
       /^end /{ running = "" } END { exit bad }' "$RECIPE_EVENTS" >&2 || fail "jobs overlapped (events: $(tr '\n' ' ' <"$RECIPE_EVENTS"))"
}
