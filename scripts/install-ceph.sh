#!/usr/bin/env bash
# Makes sure the Ceph binaries used by scripts/ceph-rgw.sh exist (idempotent): Debian's packages
# `ceph-mon`, `ceph-osd` and `radosgw` (Ceph 16.2 "Pacific" on bookworm), with `ceph-common` for the
# `ceph` and `radosgw-admin` tools. Their own services are never used (and without systemd, never
# started): the script runs one monitor, one in-memory OSD and one gateway under a directory of its own.
set -euo pipefail
if command -v ceph-mon >/dev/null 2>&1 && command -v ceph-osd >/dev/null 2>&1 \
   && command -v radosgw >/dev/null 2>&1 && command -v radosgw-admin >/dev/null 2>&1; then
  echo "ceph present: $(ceph-mon --version | head -1)" >&2
  exit 0
fi
sudo_cmd=()
[ "$(id -u)" -ne 0 ] && sudo_cmd=(sudo)
"${sudo_cmd[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends \
  ceph-mon ceph-osd radosgw ceph-common >/dev/null
echo "ceph installed: $(ceph-mon --version | head -1)" >&2
