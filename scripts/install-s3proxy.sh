#!/usr/bin/env bash
# Installs S3Proxy (org.gaul:s3proxy:4.1.0, the jar-with-dependencies) into <repo>/.tools/s3proxy,
# plus Azurite, which it fronts in the tests (see scripts/s3.sh). Idempotent.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/.." && pwd)"
version=4.1.0
dir="$root/.tools/s3proxy"
jar="$dir/s3proxy-$version-jar-with-dependencies.jar"
bash "$here/install-azurite.sh"
[ -s "$jar" ] && exit 0
command -v mvn >/dev/null || { echo "install-s3proxy: mvn is needed" >&2; exit 1; }
mkdir -p "$dir"
mvn -B -q -ntp org.apache.maven.plugins:maven-dependency-plugin:3.8.1:copy \
  -Dartifact="org.gaul:s3proxy:$version:jar:jar-with-dependencies" \
  -DoutputDirectory="$dir" -Dmdep.overWriteIfNewer=true >&2
[ -s "$jar" ] || { echo "install-s3proxy: $jar missing after download" >&2; exit 1; }
