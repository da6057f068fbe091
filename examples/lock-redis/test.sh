#!/usr/bin/env bash
# CI's check of the out-of-tree example (scripts/test.sh calls it from the repository root):
#   1. installs redis-server if missing;
#   2. installs lock-api and lock-tck into the local Maven repository (in CI the main `mvn deploy`
#      has installed them already; run alone, this does it), as a third party would get them;
#   3. builds the example on its own POM and runs the kit against a real server (mvn verify);
#   4. builds a plugin folder — the example's jar and its runtime dependencies, not lock-api —
#      and runs `latchkey run` with LATCHKEY_PLUGIN_PATH pointing at it.
# It also checks that the POM in README.md is pom.xml.
# Maven settings such as -Dmaven.repo.local go in MAVEN_OPTS. About 4 minutes on 2 busy cores, 2-3 of
# them the example's build and kit.
set -euo pipefail
cd "$(dirname "$0")/../.."
example=examples/lock-redis

if ! command -v redis-server >/dev/null; then
  sudo_cmd=()
  [ "$(id -u)" -ne 0 ] && sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq redis-server >/dev/null
fi
echo "== lock-redis: $(redis-server --version)" >&2

# the README's POM is the one that runs here: a copy-paste of it must work
if ! diff <(sed -n '/^## The POM/,$p' "$example/README.md" | sed -n '/^```xml$/,/^```$/p' | sed '1d;$d') "$example/pom.xml" >&2; then
  echo "lock-redis: the POM in README.md differs from pom.xml (above); make them the same" >&2; exit 1
fi

mvn -B -ntp -q install -DskipTests -pl lock-api,lock-tck -am
mvn -B -ntp -f "$example/pom.xml" verify

plugin="$example/target/plugin"
rm -rf "$plugin"
mvn -B -ntp -q -f "$example/pom.xml" dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$PWD/$plugin"
cp "$example"/target/lock-redis-*.jar "$plugin/"
if ls "$plugin" | grep -q '^lock-api'; then
  echo "lock-redis: the plugin folder holds lock-api; the command supplies it (scope provided)" >&2; exit 1
fi

state="$(mktemp -d)"
trap 'bash "$example/scripts/redis.sh" stop "$state/redis" >/dev/null 2>&1 || true; rm -rf "$state"' EXIT
uri="$(bash "$example/scripts/redis.sh" start "$state/redis")"
# the URI carries the server's password: in the environment, never on a command line
out="$(LATCHKEY_URI="$uri" LATCHKEY_PLUGIN_PATH="$plugin" ./latchkey run --key k -- echo hi)"
if [ "$out" != "hi" ]; then
  echo "lock-redis: latchkey run through the plugin printed '$out', expected 'hi'" >&2; exit 1
fi
echo "== lock-redis: latchkey run through the plugin folder works" >&2
