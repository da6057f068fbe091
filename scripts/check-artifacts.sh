#!/usr/bin/env bash
# Proves that what `mvn deploy` wrote to a file repository is what Maven Central needs and what a user
# can consume (docs/artifacts.md). Usage: scripts/check-artifacts.sh [REPO]   (default: .run/deploy,
# where scripts/test.sh deploys). Three checks, each failing with what to fix:
#  (a) every published artifact (the deployed dev/latchkey/* and the entries of latchkey-bom, which must
#      be the same set) has its jar, sources jar and javadoc jar; the jar names its module
#      (Automatic-Module-Name dev.latchkey.*); the POM has no parent, no ${...}, a version on every
#      dependency, and name, description, url, licence, developer and scm; lock-cli has its `all` jar
#      and `dist` archive; no jar but lock-bench's and lock-cli's holds bench code (dev/latchkey/bench/,
#      a *Baseline* class, a dev.latchkey.bench.Baseline service) and no other POM depends on lock-bench.
#  (b) a fresh project that imports latchkey-bom and depends on lock-api resolves with an empty local
#      repository and REPO as its only repository (any other POM or BOM it asked for would not be
#      found), and gets lock-api alone. Plugins come from LATCHKEY_PLUGIN_REPO (default
#      ~/.m2/repository, where the build put them), which Maven consults for plugins only.
#  (c) the distribution archive, unpacked anywhere, runs `bin/latchkey run --key demo -- echo hello`
#      with the default file:// backend (under a throwaway HOME), and its class-data sharing archive
#      behaves as scripts/check-launcher.sh checks (made on first use, mapped next, replaced when the
#      jar changes, safe when runs start at once or the archive cannot be made).
set -euo pipefail
cd "$(dirname "$0")/.."
repo="$(readlink -f "${1:-.run/deploy}")"
plugins="$(readlink -f "${LATCHKEY_PLUGIN_REPO:-$HOME/.m2/repository}")"
[[ -d "$repo/dev/latchkey" ]] || { echo "check-artifacts: no dev/latchkey under $repo: run mvn deploy first (see scripts/test.sh)" >&2; exit 1; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# (a) prints "VERSION DIST_ARCHIVE" on success
read -r version dist < <(python3 scripts/check-artifacts.py "$repo")

# (b) the only repository is $repo: `central` points there for dependencies, and every other repository a
# POM may name is mirrored there too, so a third-party POM or BOM is simply not found
mkdir -p "$work/consumer" "$work/local"
cat > "$work/settings.xml" <<EOF
<settings>
  <mirrors><mirror><id>only-the-deployed</id><mirrorOf>*,!central</mirrorOf><url>file://$repo</url></mirror></mirrors>
  <profiles><profile><id>only-the-deployed</id>
    <repositories><repository><id>central</id><url>file://$repo</url>
      <releases><enabled>true</enabled></releases><snapshots><enabled>true</enabled></snapshots></repository></repositories>
    <pluginRepositories><pluginRepository><id>central</id><url>file://$plugins</url>
      <releases><checksumPolicy>ignore</checksumPolicy></releases></pluginRepository></pluginRepositories>
  </profile></profiles>
  <activeProfiles><activeProfile>only-the-deployed</activeProfile></activeProfiles>
</settings>
EOF
cat > "$work/consumer/pom.xml" <<EOF
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>example</groupId><artifactId>consumer</artifactId><version>1</version>
  <dependencyManagement><dependencies>
    <dependency><groupId>dev.latchkey</groupId><artifactId>latchkey-bom</artifactId><version>$version</version><type>pom</type><scope>import</scope></dependency>
  </dependencies></dependencyManagement>
  <dependencies><dependency><groupId>dev.latchkey</groupId><artifactId>lock-api</artifactId></dependency></dependencies>
</project>
EOF
if ! (cd "$work/consumer" && mvn -B -ntp -s "$work/settings.xml" -Dmaven.repo.local="$work/local" \
        org.apache.maven.plugins:maven-dependency-plugin:3.8.1:list -DoutputFile="$work/list.txt" -DexcludeTransitive=false \
        > "$work/consumer.log" 2>&1); then
  grep -E "^\[ERROR\] [^ []" "$work/consumer.log" | grep -v "To see the full\|Re-run Maven\|For more information" | head -10 >&2
  echo "check-artifacts: (b) a project using only latchkey-bom and lock-api does not resolve from $repo alone (above)" >&2
  exit 1
fi
resolved="$(grep -Eo '[^ ]+:[^ ]+:jar:[^ ]+:[a-z]+' "$work/list.txt" | sed 's/ *$//' | sort)"
if [[ "$resolved" != "dev.latchkey:lock-api:jar:$version:compile" ]]; then
  echo "check-artifacts: (b) lock-api should bring nothing with it, but resolved:" >&2
  echo "$resolved" >&2
  exit 1
fi
echo "check-artifacts: (b) latchkey-bom + lock-api resolved from $repo alone: $resolved" >&2

# (c) the archive as a user installs it
tar -xzf "$dist" -C "$work"
home="$work/home"; mkdir -p "$home"
out="$(cd "$work" && env -u LATCHKEY_URI -u XDG_CACHE_HOME -u LATCHKEY_CDS HOME="$home" "$work/latchkey-$version/bin/latchkey" run --key demo -- echo hello)"
if [[ "$out" != "hello" ]]; then
  echo "check-artifacts: (c) bin/latchkey run --key demo -- echo hello printed '$out'" >&2
  exit 1
fi
[[ -d "$home/.latchkey/locks" ]] || { echo "check-artifacts: (c) the default file:// backend left no $home/.latchkey/locks" >&2; exit 1; }
echo "check-artifacts: (c) $(basename "$dist") runs bin/latchkey run --key demo -- echo hello: ok" >&2

# (c) class-data sharing: the launcher's archive, checked on this unpacked copy (its jar gets touched)
bash scripts/check-launcher.sh "$work/latchkey-$version"
