#!/usr/bin/env bash
# Every backend measured in one run beside its floors and peers: builds the CLI with the peer
# libraries (module lock-bench-peers), starts each real server on loopback (scripts/<name>.sh),
# runs `latchkey bench URI` per backend URI, and ends with the ratios (p50s, throughput under
# contention) and the hold rows (N leases held at once) of all runs.
#   scripts/bench.sh [--duration 5s] [mem|file|postgres|clickhouse|s3|gcs|azure ...]
# Without names it measures all of them (about 2 minutes per URI at the default 5 s per phase, plus
# the hold phases: about 15 s to a minute each; about 10 minutes in all at --duration 3s).
# The full output is kept in .run/bench/report.txt. Nothing is asserted: these are this machine's
# numbers this time.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

duration=5s
if [[ "${1:-}" == --duration ]]; then duration=$2; shift 2; fi
names=("$@")
[[ ${#names[@]} -gt 0 ]] || names=(mem file postgres clickhouse s3 gcs azure)
for n in "${names[@]}"; do
  case $n in mem|file|postgres|clickhouse|s3|gcs|azure) ;; *) echo "bench.sh: unknown backend '$n'" >&2; exit 2 ;; esac
done

bash scripts/install.sh >&2
echo "bench.sh: building the CLI with the peer libraries..." >&2
[[ -n "${BENCH_SKIP_BUILD:-}" ]] || mvn -B -q -ntp -DskipTests -pl lock-bench-peers -am package >&2

mkdir -p "$root/.run/bench"
state=$(mktemp -d "$root/.run/bench/servers.XXXXXX")
chmod 755 "$state"  # PostgreSQL runs as user postgres and must reach its data directory
started=()
cleanup() {
  for s in ${started[@]+"${started[@]}"}; do bash "scripts/$s.sh" stop "$state/$s" >/dev/null 2>&1 || true; done
  rm -rf "$state"
}
trap cleanup EXIT

# Starts scripts/$1.sh and sets REPLY to its URI (the script's last line of output). Not called in
# $(...): the list of servers to stop at exit must be this shell's.
server() {
  started+=("$1")
  REPLY=$(bash "scripts/$1.sh" start "$state/$1" 2>"$state/$1.log" | tail -n 1) || REPLY=
  [[ -n "$REPLY" ]] || { echo "bench.sh: scripts/$1.sh did not start:" >&2; cat "$state/$1.log" >&2; exit 1; }
}

# The hold phase per backend: N leases held for one TTL. N and the TTL are what the store here takes
# (docs/benchmarks.md, "Holding many leases", says why each): mem and file at 10,000; PostgreSQL's
# advisory mode pins a connection per lease (scripts/postgres.sh allows 200); its lease mode renews a
# manager's leases in one statement per tick, so 10,000 too; the other network stores
# renew one request per lease on 2 renewer threads, so N x 3/TTL renewals/s stays under what one
# manager's renewers can send to the store here. Azure's blob leases last 15 s at least.
hold_mem="--hold 10000 --hold-ttl 3s"
hold_file="--hold 10000 --hold-ttl 3s"
hold_pg_advisory="--hold 150 --hold-ttl 15s"
hold_pg_lease="--hold 10000 --hold-ttl 15s"
hold_clickhouse="--hold 200 --hold-ttl 15s"
hold_store="--hold 300 --hold-ttl 15s"

# Appends name=value to a URI's query.
with() { if [[ "$1" == *\?* ]]; then printf '%s&%s' "$1" "$2"; else printf '%s?%s' "$1" "$2"; fi; }

uris=()   # each URI with the hold options of its run ("" for none), as "URI|OPTIONS"
for n in "${names[@]}"; do
  case $n in
    mem) uris+=("mem://bench|$hold_mem") ;;
    file) uris+=("file://$state/file-locks|$hold_file") ;;
    postgres)
      server postgres
      # a schema holds the locks of one mode: lease mode in a schema of its own, created now because the
      # baselines (the floors, Spring's registry) open their tables before the lock has made it
      psql -X -q "$REPLY" -c 'CREATE SCHEMA IF NOT EXISTS latchkey_lease' >/dev/null
      uris+=("$(with "$REPLY" mode=advisory)|$hold_pg_advisory" "$(with "$REPLY" 'mode=advisory&fencing=false')|"
             "$(with "$REPLY" 'mode=lease&schema=latchkey_lease')|$hold_pg_lease") ;;
    clickhouse)
      server clickhouse
      # the hold at the shortest settle: acquiring N keys costs N settle windows
      uris+=("$REPLY|" "$(with "$REPLY" settle=100ms)|" "$(with "$REPLY" settle=10ms)|$hold_clickhouse") ;;
    s3) server s3; uris+=("$REPLY|$hold_store") ;;
    gcs) server gcs; uris+=("$REPLY|$hold_store") ;;
    azure)
      server azurite
      uris+=("$(with "$REPLY" mode=lease)|$hold_store" "$(with "$REPLY" mode=etag)|$hold_store") ;;
  esac
done

classpath="lock-bench-peers/target/classes:$(cat lock-bench-peers/target/classpath.txt)"
report="$root/.run/bench/report.txt"
: >"$report"
for entry in "${uris[@]}"; do
  uri=${entry%|*}
  read -r -a hold <<<"${entry##*|}"
  java -cp "$classpath" dev.latchkey.cli.LatchkeyCommand bench "$uri" --duration "$duration" ${hold[@]+"${hold[@]}"} 2>&1 \
    | tee -a "$report"
  echo | tee -a "$report"
done

echo "== ratios (this run; $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)) =="
awk '/^latchkey bench /{uri=$3; sub(/:$/, "", uri)} /^ratio of /{sub(/^ratio of /, ""); printf "%-75s %s\n", uri, $0}' "$report"
echo "== held leases (renewals/s in the ops/s column) =="
awk '/^latchkey bench /{uri=$3; sub(/:$/, "", uri)} /^hold [0-9]+ leases/{printf "%-75s %s\n", uri, $0}' "$report"
