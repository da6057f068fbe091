#!/usr/bin/env bash
# The Docker engine for the container route of the tests (docs/testing.md, "Two routes"): Debian's
# docker.io and mmdebstrap (the images are built from Debian's packages, scripts/images/build.sh),
# then an engine started if none answers. Prints the engine's DOCKER_HOST LAST; export it for the
# tests. Does nothing unless a run wants containers (LATCHKEY_TEST_SERVERS=containers, or
# `install-docker.sh --force`). Idempotent.
# An engine that answers already (DOCKER_HOST, or /var/run/docker.sock) is used as it is. Else dockerd
# is started in the background (no systemd here), log in <repo>/.run/dockerd.log, listening only on
# /run/latchkey-docker.sock: not the default socket, so nothing else on this machine (other test
# runs, probing /var/run/docker.sock) starts using it. --iptables=false: the engine leaves the host's
# firewall alone; published ports are then served by docker-proxy on the host, which is all tests use.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
own=unix:///run/latchkey-docker.sock
if [ "${LATCHKEY_TEST_SERVERS:-scripts}" != containers ] && [ "${1:-}" != --force ]; then
  exit 0
fi
if ! command -v dockerd >/dev/null || ! command -v mmdebstrap >/dev/null; then
  [ "$(id -u)" -eq 0 ] || { echo "install-docker: run as root (apt-get install docker.io mmdebstrap)" >&2; exit 1; }
  # another apt run on the machine holds the lock for minutes at most: wait for it
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q -o DPkg::Lock::Timeout=600 \
    --no-install-recommends docker.io mmdebstrap >&2
fi
for host in "${DOCKER_HOST:-}" unix:///var/run/docker.sock "$own"; do
  [ -n "$host" ] && DOCKER_HOST="$host" docker version >/dev/null 2>&1 && { echo "$host"; exit 0; }
done
[ "$(id -u)" -eq 0 ] || { echo "install-docker: no Docker engine answers, and only root can start dockerd" >&2; exit 1; }
mkdir -p "$root/.run"
setsid -f dockerd -H "$own" --iptables=false --ip6tables=false </dev/null >>"$root/.run/dockerd.log" 2>&1
for _ in $(seq 1 300); do
  if DOCKER_HOST="$own" docker version >/dev/null 2>&1; then
    echo "dockerd answers on $own (log: .run/dockerd.log)" >&2
    echo "$own"; exit 0
  fi
  sleep 0.2
done
echo "install-docker: dockerd did not answer within a minute; the end of .run/dockerd.log:" >&2
tail -n 30 "$root/.run/dockerd.log" >&2
exit 1
