#!/usr/bin/env bash
# Checks bin/latchkey's class-data sharing archive (docs/command.md, "The launcher"). Usage:
#   scripts/check-launcher.sh [DIST]
# DIST is an unpacked distribution archive (bin/latchkey, lib/latchkey.jar; scripts/check-artifacts.sh
# passes its own); without it, lock-cli/src/dist/bin/latchkey and lock-cli/target/latchkey.jar (build it
# first) are copied into that layout. The jar is touched in the course of the check, so only a throwaway
# copy may be given. Each run has a throwaway HOME (the default file:// backend and ~/.cache/latchkey).
# Checked, each failing with what went wrong (eight archives are made: 42 s on the 2-core machine at
# load 15-20; the first seven took 12 s quiet, 36 s at load 7):
#  - a first run makes one archive (an AOT cache on JDK 25+, else a static archive) and prints only what
#    CMD prints; the next maps it, picocli's classes included on JDK 17, none of them read from the jar
#    (JDK 17 keeps class-file version 49 out of a dynamic archive, not out of a static one);
#  - an archive the JVM rejects (not one it wrote) is ignored without a word;
#  - a rebuilt jar gets a new archive in place of the old one;
#  - LATCHKEY_CDS=off makes none;
#  - a java that cannot dump one: the run still works, the failure is recorded and not tried again;
#  - four concurrent first runs all work, silently, and leave one archive and no temporary file;
#  - a first run stopped (TERM) while it trains leaves no temporary directory and no archive, and the
#    next run makes one.
set -euo pipefail
cd "$(dirname "$0")/.."
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
if [[ -n "${1:-}" ]]; then
  dist="$(readlink -f "$1")"
else
  [[ -f lock-cli/target/latchkey.jar ]] || { echo "check-launcher: no lock-cli/target/latchkey.jar: run ./latchkey --version (it builds it) first" >&2; exit 1; }
  dist="$work/dist"
  mkdir -p "$dist/bin" "$dist/lib"
  cp lock-cli/src/dist/bin/latchkey "$dist/bin/"
  cp lock-cli/target/latchkey.jar "$dist/lib/"
fi
launcher="$dist/bin/latchkey"
fail() { echo "check-launcher: $*" >&2; exit 1; }

# runs `bin/latchkey run --key demo-PID -- echo hello` (a key of its own) with HOME=$home, extra environment as arguments;
# fails unless it printed exactly hello and nothing on stderr
hello() {
  local what="$1"; shift
  local out err="$work/stderr.$BASHPID"
  out="$(cd "$work" && env -u LATCHKEY_URI -u XDG_CACHE_HOME -u LATCHKEY_CDS -u LATCHKEY_JAVA_OPTS HOME="$home" "$@" \
          "$launcher" run --key "demo-$BASHPID" -- echo hello 2>"$err")" || fail "$what: exit status $?; stderr: $(cat "$err")"
  [[ "$out" == hello ]] || fail "$what: printed '$out'"
  [[ ! -s "$err" ]] || fail "$what: wrote to stderr: $(cat "$err")"
}
archives() { [[ -d "$home/.cache/latchkey" ]] || return 0; find "$home/.cache/latchkey" -name '*.jsa' -o -name '*.aot' | sort; }
leftovers() { [[ -d "$home/.cache/latchkey" ]] || return 0; find "$home/.cache/latchkey" -name '*.tmp*' | sort; }

# first run, next run, a rejected archive, a rebuilt jar
home="$work/home1"; mkdir -p "$home"
hello "the first run"
first="$(archives)"
[[ -n "$first" && "$first" != *$'\n'* ]] || fail "expected one archive under $home/.cache/latchkey after the first run, found: '$first'"
[[ -z "$(leftovers)" ]] || fail "the first run left temporary files: $(leftovers)"
# JAVA_TOOL_OPTIONS makes the JVM say "Picked up ..." on stderr: this run's stderr is filtered instead
out="$(cd "$work" && env -u LATCHKEY_URI -u XDG_CACHE_HOME -u LATCHKEY_CDS -u LATCHKEY_JAVA_OPTS HOME="$home" \
        JAVA_TOOL_OPTIONS="-Xlog:class+load=info:file=$work/classes.log" "$launcher" run --key demo -- echo hello 2>"$work/stderr")"
[[ "$out" == hello ]] || fail "the second run printed '$out'"
grep -v '^Picked up JAVA_TOOL_OPTIONS' "$work/stderr" | grep -q . && fail "the second run wrote to stderr: $(cat "$work/stderr")"
# picocli's classes (class-file version 49) are in JDK 17's static archive; JDK 25 leaves such classes
# out of its AOT cache (JDKs in between are not checked here)
archived=(dev.latchkey.cli.RunCommand)
[[ "$(java -XshowSettings:properties -version 2>&1)" =~ java\.specification\.version\ =\ 17$'\n' ]] \
  && archived+=(picocli.CommandLine)
for class in "${archived[@]}"; do
  grep -q "\] $class source: shared objects file" "$work/classes.log" || fail "the second run did not load $class from $first"
done
# and on JDK 17 none of picocli's from the jar: a lambda of one of its interfaces would have left that
# interface, and the classes implementing it, out of the archive (see LatchkeyCommand.commandLine)
if [[ " ${archived[*]} " == *" picocli.CommandLine "* ]]; then
  from_jar="$(grep -o '\] picocli\.[^ ]* source: file:' "$work/classes.log" | cut -d' ' -f2 | tr '\n' ' ' || true)"
  [[ -z "$from_jar" ]] || fail "the second run read picocli classes from the jar, not from $first: $from_jar"
fi
saved="$work/archive.saved"
cp -p "$first" "$saved"
head -c 4096 /dev/urandom > "$work/junk" && chmod u+w "$first" && cp "$work/junk" "$first"
hello "a run on an archive the JVM rejects"
cp -p "$saved" "$first"
touch -d '+1 minute' "$dist/lib/latchkey.jar"
hello "the first run after the jar changed"
second="$(archives)"
[[ -n "$second" && "$second" != *$'\n'* && "$second" != "$first" ]] || fail "after the jar changed, expected one new archive in place of $first, found: '$second'"
echo "check-launcher: a first run made an archive, the next mapped it (${archived[*]}), a rejected one was ignored, a changed jar got a new one: ok" >&2

# LATCHKEY_CDS=off
home="$work/home2"; mkdir -p "$home"
hello "a run with LATCHKEY_CDS=off" LATCHKEY_CDS=off
[[ ! -e "$home/.cache/latchkey" ]] || fail "LATCHKEY_CDS=off made $(find "$home/.cache/latchkey")"

# a java that cannot dump an archive: a PATH java that fails -Xshare:dump and -XX:AOTCacheOutput (the
# dump of an AOT cache) and counts the attempts
home="$work/home3"; mkdir -p "$home" "$work/failing-java"
real_java="$(type -P java)"
cat > "$work/failing-java/java" <<EOF
#!/usr/bin/env bash
for a; do [[ "\$a" == -Xshare:dump || "\$a" == -XX:AOTCacheOutput=* ]] && { echo dump >> "$work/dump-attempts"; exit 1; }; done
exec "$real_java" "\$@"
EOF
chmod +x "$work/failing-java/java"
hello "a run whose java cannot dump" PATH="$work/failing-java:$PATH"
hello "the next run whose java cannot dump" PATH="$work/failing-java:$PATH"
[[ "$(wc -l < "$work/dump-attempts")" -eq 1 ]] || fail "a java that cannot dump was asked $(wc -l < "$work/dump-attempts") times, not once"
[[ -z "$(archives)" && -z "$(leftovers)" ]] || fail "a failed dump left: $(archives) $(leftovers)"
[[ -n "$(find "$home/.cache/latchkey" -name '*.failed')" ]] || fail "a failed dump was not recorded"
echo "check-launcher: LATCHKEY_CDS=off made no archive; a java that cannot dump ran without, was asked once: ok" >&2

# concurrent first runs
home="$work/home4"; mkdir -p "$home"
pids=()
for i in 1 2 3 4; do
  ( hello "concurrent first run $i" ) &
  pids+=($!)
done
for pid in "${pids[@]}"; do wait "$pid" || fail "a concurrent first run failed (above)"; done
made="$(archives)"
[[ -n "$made" && "$made" != *$'\n'* ]] || fail "four concurrent first runs left, instead of one archive: '$made'"
[[ -z "$(leftovers)" ]] || fail "concurrent first runs left temporary files: $(leftovers)"
hello "the run after concurrent first runs"
echo "check-launcher: four concurrent first runs worked, silently, and left one archive: ok" >&2

# a first run stopped while it trains: TMPDIR of its own, so its training directory can be seen
home="$work/home5"; mkdir -p "$home" "$work/tmp5"
( cd "$work" && exec env -u LATCHKEY_URI -u XDG_CACHE_HOME -u LATCHKEY_CDS -u LATCHKEY_JAVA_OPTS HOME="$home" TMPDIR="$work/tmp5" \
    "$launcher" run --key demo-stopped -- echo hello >/dev/null 2>&1 ) &
pid=$!
until [[ -n "$(ls -A "$work/tmp5")" ]]; do
  kill -0 "$pid" 2>/dev/null || fail "the run to be stopped ended before it started training"
  sleep 0.05
done
kill -TERM "$pid"
status=0; wait "$pid" || status=$?
[[ $status -eq 143 ]] || fail "a run stopped while it trained exited with $status, not 143"
[[ -z "$(ls -A "$work/tmp5")" ]] || fail "a run stopped while it trained left: $(ls -A "$work/tmp5")"
[[ -z "$(archives)" && -z "$(leftovers)" ]] || fail "a run stopped while it trained left: $(archives) $(leftovers)"
hello "the run after a stopped first run"
[[ -n "$(archives)" ]] || fail "the run after a stopped first run made no archive"
echo "check-launcher: a first run stopped while it trained left nothing behind; the next made an archive: ok" >&2
