#!/usr/bin/env bash
# Builds a test server's image from Debian's packages, for the container route of the tests
# (docs/testing.md), and prints its name LAST: latchkey-test/<name>:<hash>.
#   scripts/images/build.sh postgres|azurite
# The tag is a hash of the recipe (this script, scripts/images/<name>/, and for Azurite the
# installed npm package's version): an image with that tag is reused, so a changed recipe builds a
# new one and an unchanged one costs nothing. No registry is asked: the root file system comes from
# mmdebstrap (Debian bookworm, minbase), then `docker import`. Run scripts/install-docker.sh first.
# Every image carries the label dev.latchkey.test, as the tests' containers do (cleanup by label).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
here="$root/scripts/images"
name="${1:-}"
case "$name" in
  postgres|azurite) ;;
  *) echo "usage: $0 postgres|azurite" >&2; exit 2 ;;
esac
# the engine scripts/install-docker.sh starts when the machine has none
if [ -z "${DOCKER_HOST:-}" ] && [ ! -S /var/run/docker.sock ] && [ -S /run/latchkey-docker.sock ]; then
  export DOCKER_HOST=unix:///run/latchkey-docker.sock
fi
command -v docker >/dev/null && docker version >/dev/null 2>&1 \
  || { echo "no Docker engine answers: run scripts/install-docker.sh --force (as root)" >&2; exit 1; }
recipe() { cat "$here/build.sh"; [ ! -d "$here/$name" ] || find "$here/$name" -type f | sort | xargs -r cat; }
if [ "$name" = azurite ]; then
  azurite="$root/.tools/azurite"
  [ -f "$azurite/node_modules/azurite/package.json" ] || bash "$root/scripts/install-azurite.sh"
  version() { grep -m1 '"version"' "$azurite/node_modules/azurite/package.json"; }
  hash="$( (recipe; version) | sha256sum | cut -c1-12)"
else
  hash="$(recipe | sha256sum | cut -c1-12)"
fi
image="latchkey-test/$name:$hash"
if docker image inspect "$image" >/dev/null 2>&1; then echo "$image"; exit 0; fi

# the package caches go: a smaller image, and nothing a test needs
common=(--variant=minbase --aptopt='Acquire::Retries "3"' --customize-hook='rm -rf "$1"/var/cache/apt/* "$1"/var/lib/apt/lists/*')
changes=(--change 'LABEL dev.latchkey.test=true')
case "$name" in
  postgres)
    args=(--include=postgresql-15
      --customize-hook="copy-in $here/postgres/entrypoint.sh /usr/local/bin"
      --customize-hook='chmod 755 "$1"/usr/local/bin/entrypoint.sh; install -d -o "$(chroot "$1" id -u postgres)" -g "$(chroot "$1" id -g postgres)" -m 700 "$1"/var/lib/postgresql/data "$1"/docker-entrypoint-initdb.d')
    changes+=(--change 'USER postgres' --change 'EXPOSE 5432' --change 'ENTRYPOINT ["/usr/local/bin/entrypoint.sh"]'
      --change 'CMD ["postgres"]')
    ;;
  azurite)
    args=(--include=nodejs
      --customize-hook='mkdir -p "$1"/opt/azurite "$1"/data'
      --customize-hook="copy-in $azurite/node_modules /opt/azurite")
    changes+=(--change 'EXPOSE 10000' --change 'ENV PATH=/opt/azurite/node_modules/.bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'
      --change 'CMD ["azurite-blob", "--blobHost", "0.0.0.0", "--location", "/data", "--skipApiVersionCheck", "--disableTelemetry"]')
    ;;
esac
started=$SECONDS
echo "building $image (mmdebstrap bookworm + docker import)…" >&2
mmdebstrap --quiet "${common[@]}" "${args[@]}" bookworm - http://deb.debian.org/debian \
  | docker import "${changes[@]}" - "$image" >&2
echo "built $image in $((SECONDS - started)) s" >&2
echo "$image"
