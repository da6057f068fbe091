#!/usr/bin/env bash
# Azurite (Azure Blob emulator) on a free loopback port, for tests and benchmarks.
#   scripts/azurite.sh start <stateDir>   starts it in the background (data on disk under <stateDir>/data),
#                                         waits until it answers a real request, creates the container
#                                         "latchkey" and prints the lock URI as the LAST line
#   scripts/azurite.sh stop <stateDir>    stops it and waits until the process is gone
#   scripts/azurite.sh start <stateDir> --faketime
#                                         as start, but the server runs under libfaketime (Debian's
#                                         package; install-azurite.sh installs it): its Date headers,
#                                         Last-Modified and lease expiry are real time plus the offset in
#                                         <stateDir>/faketime, read at every call (monotonic clocks, and
#                                         so its timers, untouched). `clock <stateDir> <offset>` steps it,
#                                         e.g. `+120s`, `-30s`, `+0` (tests of a server-clock step)
# On-disk data, not --inMemoryPersistence: the in-memory store stalls for minutes in its periodic
# clean-up after ~20k overwrites. Run scripts/install-azurite.sh first.
set -euo pipefail
# shellcheck source=lib/faketime.sh
. "$(dirname "$0")/lib/faketime.sh"
root="$(cd "$(dirname "$0")/.." && pwd)"
bin="$root/.tools/azurite/node_modules/.bin/azurite-blob"
account=devstoreaccount1
# Azurite's well-known development key (public, documented by Microsoft; not a secret)
key='Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=='
container=latchkey

usage() { echo "usage: $0 start|stop <stateDir> | start <stateDir> --faketime | clock <stateDir> <offset>" >&2; exit 2; }
[ $# -eq 2 ] || [ $# -eq 3 ] || usage
cmd=$1; option="${3:-}"
state="$(mkdir -p "$2" && cd "$2" && pwd)"

free_port() {
  node -e "const s=require('net').createServer();s.listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})"
}

# Creates a container with a Shared Key signed request (curl cannot sign Azure requests itself).
create_container() {
  AZ_PORT=$1 AZ_ACCOUNT=$account AZ_KEY=$key AZ_CONTAINER=$2 node -e '
const http = require("http"), crypto = require("crypto");
const {AZ_PORT: port, AZ_ACCOUNT: acct, AZ_KEY: key, AZ_CONTAINER: name} = process.env;
const date = new Date().toUTCString(), version = "2021-08-06";
const toSign = ["PUT", "", "", "", "", "", "", "", "", "", "", "",
  `x-ms-date:${date}\nx-ms-version:${version}`,
  `/${acct}/${acct}/${name}\nrestype:container`].join("\n");
const sig = crypto.createHmac("sha256", Buffer.from(key, "base64")).update(toSign, "utf8").digest("base64");
const req = http.request({host: "127.0.0.1", port, method: "PUT", path: `/${acct}/${name}?restype=container`,
  headers: {"x-ms-date": date, "x-ms-version": version, "Authorization": `SharedKey ${acct}:${sig}`, "Content-Length": 0}},
  res => { res.resume(); res.on("end", () => {
    if (res.statusCode === 201 || res.statusCode === 409) process.exit(0);
    console.error(`create container ${name}: HTTP ${res.statusCode}`); process.exit(1); }); });
req.on("error", e => { console.error(`create container ${name}: ${e.message}`); process.exit(1); });
req.end();'
}

stop() {
  [ -f "$state/azurite.pid" ] || return 0
  local pid; pid=$(cat "$state/azurite.pid")
  # setsid made the server a session and process-group leader: end the whole group
  kill -TERM -- "-$pid" 2>/dev/null || true
  for _ in $(seq 1 100); do
    kill -0 "$pid" 2>/dev/null || { stopped "$pid"; return 0; }
    sleep 0.1
  done
  kill -KILL -- "-$pid" 2>/dev/null || true
  stopped "$pid"
}

stopped() {
  # node leaves libfaketime's shared memory behind (its exit skips the library's clean-up)
  rm -f "/dev/shm/faketime_shm_$1" "/dev/shm/sem.faketime_sem_$1" "$state/azurite.pid"
}

case "$cmd" in
  start)
    [ -x "$bin" ] || { echo "azurite not installed: run scripts/install-azurite.sh" >&2; exit 1; }
    faketime=()
    if [ "$option" = "--faketime" ]; then
      # the server only (not curl, not the container's creation); its timers keep the real monotonic clock
      faketime_env "$state" scripts/install-azurite.sh || exit 1
    elif [ -n "$option" ]; then
      echo "unknown option '$option' (--faketime)" >&2; exit 2
    else
      rm -f "$state/faketime" # a plain start's clock cannot be stepped
    fi
    stop
    port=$(free_port)
    mkdir -p "$state/data"
    setsid -f bash -c 'echo $$ > "$0"; exec "$@"' "$state/azurite.pid" \
      "${faketime[@]}" "$bin" --blobHost 127.0.0.1 --blobPort "$port" --location "$state/data" \
      --skipApiVersionCheck --disableTelemetry </dev/null >"$state/azurite.log" 2>&1
    for _ in $(seq 1 600); do
      code=$(curl -s -o /dev/null -m 2 -w '%{http_code}' "http://127.0.0.1:$port/$account?comp=list" || true)
      [ -n "$code" ] && [ "$code" != 000 ] && break
      sleep 0.1
    done
    if [ -z "${code:-}" ] || [ "$code" = 000 ]; then
      echo "azurite did not answer on port $port; log:" >&2; cat "$state/azurite.log" >&2; stop; exit 1
    fi
    echo "$port" > "$state/port"
    create_container "$port" "$container" || { stop; exit 1; }
    echo "azurite blob service on http://127.0.0.1:$port/$account (pid $(cat "$state/azurite.pid"))" >&2
    keyenc=$(node -e 'console.log(encodeURIComponent(process.argv[1]))' "$key")
    echo "azblob://$container/locks?endpoint=http://127.0.0.1:$port/$account&account=$account&accountKey=$keyenc"
    ;;
  clock)
    faketime_step "$state" "$option" || exit $?
    ;;
  stop) stop ;;
  *) usage ;;
esac
