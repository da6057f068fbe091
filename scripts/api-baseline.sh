#!/usr/bin/env bash
# Records the API baseline that the build's compatibility check compares with (japicmp, bound to
# `verify` in lock-api/pom.xml): lock-api's classes as of git REF, compiled as the build compiles
# them (javac --release 17), into api-baseline/lock-api.jar, and their public API as text into
# api-baseline/lock-api.txt (javap of the exported packages; the commit on its first line), so a
# review sees what changed. Run it on purpose only, after an incompatible change was agreed
# (docs/design.md, "The API check"), and commit both files with the change, in one commit.
#   scripts/api-baseline.sh          lock-api/src/main as it is in the work tree
#   scripts/api-baseline.sh REF      lock-api/src/main as of git REF (a tag, a commit)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
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
mkdir -p "$root/api-baseline"
# entries in name order with one fixed time, so the same sources give the same jar
(cd "$work/classes" && find . -type f | LC_ALL=C sort | sed 's|^\./||' > "$work/entries"
 find . -exec touch -d '2000-01-01T00:00:00Z' {} + && rm -f "$root/api-baseline/lock-api.jar" \
   && zip -q -X -D "$root/api-baseline/lock-api.jar" -@ < "$work/entries")

# the text form: every public or protected member of the exported packages (module-info.java's exports)
{
  echo "# lock-api's exported API, from $from (scripts/api-baseline.sh); the check compares with lock-api.jar beside this file"
  grep -oE '^\s*exports\s+dev\.latchkey[a-z.]*' "$work/lock-api/src/main/java/module-info.java" | awk '{print $2}' \
    | while read -r pkg; do
        dir="$work/classes/${pkg//.//}"
        find "$dir" -maxdepth 1 -name '*.class' | grep -v '\$[0-9]' | LC_ALL=C sort | sed "s|^$work/classes/||; s|\.class$||; s|/|.|g"
      done > "$work/classes.txt"
  # javap prints every class it is given: keep the public ones' blocks (a header line starts a block)
  xargs javap -protected -cp "$work/classes" < "$work/classes.txt" | grep -v '^Compiled from' \
    | awk '/^[^ }]/ { keep = ($1 == "public") } keep'
} > "$root/api-baseline/lock-api.txt"
echo "api-baseline: lock-api from $from -> api-baseline/lock-api.jar, api-baseline/lock-api.txt"
