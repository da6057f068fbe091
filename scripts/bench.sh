#!/usr/bin/env bash
# Every backend measured in one run beside its floors and peers: builds the CLI with the peer
# libraries (module lock-bench-peers), starts each real server on loopback (scripts/<name>.sh),
# runs `latchkey bench URI` per backend URI, and ends with the p50 ratios of all runs.
#   scripts/bench.sh [--duration 5s] [mem|file|postgres|clickhouse|s3|gcs|azure ...]
# Without names it measures all of them (about 2 minutes per URI at the default 5 s per phase).
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
mvn -B -q -ntp -DskipTests -pl lock-bench-peers -am package >&2

state="$root/.run/bench"
mkdir -p "$state"
started=()
cleanup() {
  for s in ${started[@]+"${started[@]}"}; do bash "scripts/$s.sh" stop "$state/$s" >/dev/null 2>&1 || true; done
}
trap cleanup EXIT

# Starts scripts/$1.sh once and prints its URI (the script's last line of output).
server() {
  local uri
  uri=$(bash "scripts/$1.sh" start "$state/$1" 2>"$state/$1.log" | tail -n 1)
  started+=("$1")
  printf '%s' "$uri"
}

# Appends name=value to a URI's query.
with() { if [[ "$1" == *\?* ]]; then printf '%s&%s' "$1" "$2"; else printf '%s?%s' "$1" "$2"; fi; }

uris=()
for n in "${names[@]}"; do
  case $n in
    mem) uris+=("mem://bench") ;;
    file) uris+=("file://$state/file-locks") ;;
    postgres)
      pg=$(server postgres)
      uris+=("$(with "$pg" mode=advisory)" "$(with "$pg" 'mode=advisory&fencing=false')" "$(with "$pg" mode=lease)") ;;
    clickhouse)
      ch=$(server clickhouse)
      uris+=("$ch" "$(with "$ch" settle=100ms)" "$(with "$ch" settle=10ms)") ;;
    s3) uris+=("$(server s3)") ;;
    gcs) uris+=("$(server gcs)") ;;
    azure)
      az=$(server azurite)
      uris+=("$(with "$az" mode=lease)" "$(with "$az" mode=etag)") ;;
  esac
done

classpath="lock-bench-peers/target/classes:$(cat lock-bench-peers/target/classpath.txt)"
report="$state/report.txt"
: >"$report"
for uri in "${uris[@]}"; do
  java -cp "$classpath" dev.latchkey.cli.LatchkeyCommand bench "$uri" --duration "$duration" 2>&1 | tee -a "$report"
  echo | tee -a "$report"
done

echo "== p50 ratios (this run; $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)) =="
awk '/^latchkey bench /{uri=$3; sub(/:$/, "", uri)} /^ratio of p50s: /{sub(/^ratio of p50s: /, ""); printf "%-75s %s\n", uri, $0}' "$report"
