#!/usr/bin/env bash
# Records the API baselines that the build's compatibility checks compare with (japicmp, bound to
# `verify` in lock-api/pom.xml and lock-tck/pom.xml):
# - lock-api's classes as of git REF, compiled as the build compiles them (javac --release 17), into
#   api-baseline/lock-api.jar, and their public API as text into api-baseline/lock-api.txt (javap of
#   the exported packages; the commit on its first line), so a review sees what changed;
# - with `lock-tck`: the kit's classes as the work tree builds them (what backend authors extend:
#   LockManagerContract's hooks, the other contracts, ExternalServer, FaultProxy…) into
#   api-baseline/lock-tck.jar and api-baseline/lock-tck.txt.
# Run it on purpose only, after an incompatible change was agreed (docs/design.md, "The API check"),
# and commit both files with the change, in one commit.
#   scripts/api-baseline.sh          lock-api/src/main as it is in the work tree
#   scripts/api-baseline.sh REF      lock-api/src/main as of git REF (a tag, a commit)
#   scripts/api-baseline.sh lock-tck lock-tck/src/main as it is in the work tree (it needs its
#                                    dependencies, so Maven compiles it: offline, no tests)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# a deterministic jar of DIR's classes: entries in name order with one fixed time, so the same classes give the same jar
jar_of() {
  (cd "$1" && find . -type f | LC_ALL=C sort | sed 's|^\./||' > "$work/entries"
   find . -exec touch -d '2000-01-01T00:00:00Z' {} + && rm -f "$2" && zip -q -X -D "$2" -@ < "$work/entries")
}
# the text form: every public or protected member of the public classes of PACKAGES (from DIR)
api_text() {
  local dir="$1"; shift
  for pkg in "$@"; do
    find "$dir/${pkg//.//}" -maxdepth 1 -name '*.class' | grep -v '\$[0-9]' | LC_ALL=C sort | sed "s|^$dir/||; s|\.class$||; s|/|.|g"
  done > "$work/classes.txt"
  # javap prints every class it is given: keep the public ones' blocks (a header line starts a block)
  xargs javap -protected -cp "$dir" < "$work/classes.txt" | grep -v '^Compiled from' \
    | awk '/^[^ }]/ { keep = ($1 == "public") } keep'
}
mkdir -p "$root/api-baseline"
if [[ "${1:-}" == lock-tck ]]; then
  commit="$(git -C "$root" rev-parse HEAD)"
  from="the work tree on commit $commit"
  git -C "$root" diff --quiet HEAD -- lock-tck/src/main || from="$from, with lock-tck's uncommitted changes"
  (cd "$root" && mvn -B -q -ntp -o compile -pl lock-tck -am)
  cp -r "$root/lock-tck/target/classes" "$work/tck-classes"
  jar_of "$work/tck-classes" "$root/api-baseline/lock-tck.jar"
  { echo "# lock-tck's API, from $from (scripts/api-baseline.sh lock-tck); the check compares with lock-tck.jar beside this file"
    api_text "$work/tck-classes" dev.latchkey.tck
  } > "$root/api-baseline/lock-tck.txt"
  echo "api-baseline: lock-tck from $from -> api-baseline/lock-tck.jar, api-baseline/lock-tck.txt"
  exit 0
fi
if [[ $# -gt 0 ]]; then
  commit="$(git -C "$root" rev-parse --verify "$1^{commit}")"
  from="commit $commit"
  git -C "$root" archive "$commit" lock-api/src/main | tar -x -C "$work"
else
  commit="$(git -C "$root" rev-parse HEAD)"
  from="the work tree on commit $commit"
  git -C "$root" diff --quiet HEAD -- lock-api/src/main || from="$from, with lock-api's uncommitted changes"
  mkdir -p "$work/lock-api/src" && cp -r "$root/lock-api/src/main" "$work/lock-api/src/"
fi
mkdir -p "$work/classes"
find "$work/lock-api/src/main/java" -name '*.java' > "$work/sources"
javac --release 17 -XDstringConcat=inline -nowarn -d "$work/classes" @"$work/sources"
[[ -d "$work/lock-api/src/main/resources" ]] && cp -r "$work/lock-api/src/main/resources/." "$work/classes/"
jar_of "$work/classes" "$root/api-baseline/lock-api.jar"
{
  echo "# lock-api's exported API, from $from (scripts/api-baseline.sh); the check compares with lock-api.jar beside this file"
  # the exported packages: module-info.java's exports
  api_text "$work/classes" $(grep -oE '^\s*exports\s+dev\.latchkey[a-z.]*' "$work/lock-api/src/main/java/module-info.java" | awk '{print $2}')
} > "$root/api-baseline/lock-api.txt"
echo "api-baseline: lock-api from $from -> api-baseline/lock-api.jar, api-baseline/lock-api.txt"
