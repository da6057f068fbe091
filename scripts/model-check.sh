#!/usr/bin/env bash
# Model-checks the lock protocols with spin (model/*.pml; docs/model-checking.md says what each run
# proves). Installs spin if missing (Debian package `spin`). Every fixed model must pass its runs;
# every BUG_ switch (an old bug put back, or a design choice reversed) and each drift sensitivity run must make spin find a
# counterexample, whose trail is printed in short. Exits non-zero if a fixed model fails or a bug
# switch is not caught. Timings: docs/model-checking.md.
#
#   scripts/model-check.sh            all runs
#   scripts/model-check.sh --quick    the expected failures and one fixed run per model only
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
quick=0
case "${1:-}" in
  --quick) quick=1 ;;
  "") ;;
  *) echo "usage: scripts/model-check.sh [--quick]" >&2; exit 2 ;;
esac

if ! command -v spin >/dev/null 2>&1; then
  sudo_cmd=()
  [ "$(id -u)" -ne 0 ] && sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq spin gcc >/dev/null
fi
command -v gcc >/dev/null 2>&1 || { echo "model-check: gcc is needed to compile spin's verifier (apt-get install gcc)" >&2; exit 1; }
echo "$(spin -V)" >&2

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0

# check NAME MODEL EXPECT SEARCH DEFINES...
#   EXPECT  pass: no error, and an exhaustive search must be complete; fail: spin must find an error
#           (depth-first, which finds one fast; the trail's last steps are printed)
#   SEARCH  exhaustive (the only mode used; every fixed run must complete)
check() {
  local name=$1 model=$2 expect=$3 search=$4
  shift 4
  local dir=$work/$name
  mkdir -p "$dir"
  cp "$root/model/$model" "$dir/"
  # -O0: gcc -O2 spends longer on spin's pan.c than -O2 saves in the search at these bounds
  local cflags=(-DSAFETY -DVECTORSZ=4096) panflags=(-m3000000) opt=-O0
  local start=$SECONDS
  (cd "$dir" && spin -a "$@" "$model" >/dev/null && gcc "$opt" "${cflags[@]}" -o pan pan.c && ./pan "${panflags[@]}" >out.txt 2>&1) \
    || { echo "FAIL  $name: spin/gcc/pan did not run" >&2; cat "$dir/out.txt" 2>/dev/null | tail -5 >&2; failures=$((failures + 1)); return; }
  local out=$dir/out.txt
  local errors states depth
  errors=$(sed -n 's/.*errors: \([0-9]*\).*/\1/p' "$out" | tail -1)
  states=$(sed -n 's/^ *\([0-9.e+]*\) states, stored.*/\1/p' "$out" | tail -1)
  depth=$(sed -n 's/.*depth reached \([0-9]*\).*/\1/p' "$out" | tail -1)
  local summary="$model $* [$search]: $states states, depth $depth, $((SECONDS - start)) s"
  if [ "$expect" = pass ]; then
    if [ "${errors:-1}" != 0 ] || grep -qE "max search depth too small|out of memory" "$out"; then
      echo "FAIL  $name: $summary" >&2
      grep -E "assertion violated|max search depth|out of memory" "$out" | head -3 >&2
      [ -f "$dir/$model.trail" ] && trail "$dir" "$model" "$@"
      failures=$((failures + 1))
    else
      echo "ok    $name: $summary" >&2
    fi
  else
    if [ "${errors:-0}" = 0 ]; then
      echo "FAIL  $name: NOT caught — the model lost its teeth: $summary" >&2
      failures=$((failures + 1))
    else
      echo "ok    $name (caught, as it must be): $summary" >&2
      grep -E "assertion violated" "$out" | head -1 | sed 's/^/        /' >&2
      trail "$dir" "$model" "$@"
    fi
  fi
}

# The counterexample in short: the model's own narration (its printf lines) up to the violation.
trail() {
  local dir=$1 model=$2
  shift 2
  (cd "$dir" && spin -t "$@" "$model" 2>&1) \
    | grep -vE "^\s*$|processes created|^spin: trail ends|^#processes|^\s+[0-9]+:\s+proc " \
    | sed -n '1,/assertion violated/p' | sed -E 's/^ +/ /' | tail -26 | sed 's/^/        | /' >&2
}

# the lease engine (lock-api ConditionalStoreLockManager + ManagedLease), 3 clients; bounds in docs/model-checking.md
# Runs check in the background, as many at once as there are cores; its lines go to a log of its own,
# printed in the order of the calls once all have ended, so the output reads as if they ran in a row.
max_jobs=$(nproc 2>/dev/null || echo 1)
runs=()
run_check() {
  local name=$1
  runs+=("$name")
  while [ "$(jobs -rp | wc -l)" -ge "$max_jobs" ]; do wait -n || true; done
  ( failures=0; check "$@" 2>"$work/$name.log" || failures=1; [ "$failures" = 0 ] || : >"$work/$name.failed" ) &
}

FAULTS1=(-DFAULTS=1 -DMAXTOK=2 -DCRASHES=0 -DFORCES=0)
run_check engine-faults "lease-engine.pml" pass exhaustive "${FAULTS1[@]}"
if [ $quick = 0 ]; then
  run_check engine-crash-force "lease-engine.pml" pass exhaustive -DFAULTS=0 -DMAXTOK=2 -DCRASHES=1 -DFORCES=1
fi
for bug in BUG_RENEW_BY_LEASE_ID BUG_NO_READBACK BUG_INVALID_ON_ARRIVAL BUG_RELEASE_RENEWS; do
  run_check "engine-$bug" "lease-engine.pml" fail exhaustive "${FAULTS1[@]}" "-D$bug"
done
run_check engine-drift-beyond-margin "lease-engine.pml" fail exhaustive "${FAULTS1[@]}" -DDRIFT=4

# PostgreSQL mode=advisory (lock-postgres AdvisoryLockManager + AdvisoryLease), 3 clients, 1 restart
CUT=(-DFAULTS=0 -DCUTS=1 -DTERMS=0 -DGRANTS=2)
run_check pg-advisory-cut "pg-advisory.pml" pass exhaustive "${CUT[@]}"
if [ $quick = 0 ]; then
  run_check pg-advisory-faults "pg-advisory.pml" pass exhaustive -DFAULTS=1 -DCUTS=0 -DTERMS=0 -DGRANTS=2
  run_check pg-advisory-terminate "pg-advisory.pml" pass exhaustive -DFAULTS=0 -DCUTS=0 -DTERMS=1 -DGRANTS=2
fi
for bug in BUG_NO_RESTART_GUARD BUG_IDLE_TTL_MINUS BUG_VALID_FROM_REPLY BUG_NO_WATCH; do
  run_check "pg-advisory-$bug" "pg-advisory.pml" fail exhaustive "${CUT[@]}" "-D$bug"
done

# Azure mode=lease (lock-azure AzureLeaseLockManager + AzureLease), 3 clients, tokens 1-2
AZ=(-DFAULTS=1 -DMAXTOK=2 -DCRASHES=0 -DFORCES=0)
run_check azure-faults "azure-lease.pml" pass exhaustive "${AZ[@]}"
if [ $quick = 0 ]; then
  run_check azure-crash "azure-lease.pml" pass exhaustive -DFAULTS=0 -DMAXTOK=2 -DCRASHES=1 -DFORCES=0
  run_check azure-force "azure-lease.pml" pass exhaustive -DFAULTS=0 -DMAXTOK=2 -DCRASHES=0 -DFORCES=1
fi
for bug in BUG_NO_WITHDRAW BUG_RELEASE_409_LOST BUG_CORRUPT_TOKEN_ZERO BUG_INVALID_ON_ARRIVAL; do
  run_check "azure-$bug" "azure-lease.pml" fail exhaustive "${AZ[@]}" "-D$bug"
done
# a remembered token trusted without its ETag takes a third holder to repeat: tokens 1-3, no fault
if [ $quick = 0 ]; then
  run_check azure-remembered "azure-lease.pml" pass exhaustive -DFAULTS=0 -DMAXTOK=3 -DCRASHES=0 -DFORCES=0
fi
run_check azure-BUG_REMEMBERED_UNCHECKED "azure-lease.pml" fail exhaustive -DFAULTS=0 -DMAXTOK=3 -DCRASHES=0 -DFORCES=0 -DBUG_REMEMBERED_UNCHECKED
run_check azure-drift-beyond-margin "azure-lease.pml" fail exhaustive "${AZ[@]}" -DDRIFT=4

# PostgreSQL mode=lease (lock-postgres LeaseTableLockManager + TableLease + LeaseRenewals), 3 clients, tokens 1-2
PGL=(-DFAULTS=1 -DMAXTOK=2 -DCRASHES=0 -DFORCES=0 -DSRVCRASHES=0)
run_check pg-lease-faults "pg-lease.pml" pass exhaustive "${PGL[@]}"
if [ $quick = 0 ]; then
  run_check pg-lease-crash-force "pg-lease.pml" pass exhaustive -DFAULTS=0 -DMAXTOK=2 -DCRASHES=1 -DFORCES=1 -DSRVCRASHES=0
  run_check pg-lease-server-crash "pg-lease.pml" pass exhaustive -DFAULTS=1 -DMAXTOK=2 -DCRASHES=0 -DFORCES=0 -DSRVCRASHES=1 -DCARRIED=0
fi
for bug in BUG_NO_WITHDRAW BUG_NO_RENEW_WITHDRAW BUG_INVALID_ON_ARRIVAL BUG_BATCH_FROM_ANSWER; do
  run_check "pg-lease-$bug" "pg-lease.pml" fail exhaustive "${PGL[@]}" "-D$bug"
done
run_check pg-lease-drift-beyond-margin "pg-lease.pml" fail exhaustive "${PGL[@]}" -DDRIFT=4
# design checks: renewals and acquisitions must commit durably (releases may not)
SRV=(-DFAULTS=0 -DMAXTOK=2 -DCRASHES=0 -DFORCES=0 -DSRVCRASHES=1)
run_check pg-lease-BUG_ASYNC_RENEW "pg-lease.pml" fail exhaustive "${SRV[@]}" -DBUG_ASYNC_RENEW
run_check pg-lease-BUG_ASYNC_ACQUIRE "pg-lease.pml" fail exhaustive "${SRV[@]}" -DBUG_ASYNC_ACQUIRE

wait
for name in "${runs[@]}"; do
  cat "$work/$name.log" >&2
  [ ! -e "$work/$name.failed" ] || failures=$((failures + 1))
done

if [ $failures -ne 0 ]; then
  echo "model-check: $failures run(s) failed" >&2
  exit 1
fi
echo "model-check: all runs as expected" >&2
