#!/usr/bin/env bash
# Times commands against each other, as docs/benchmarks.md "The command's start" does. Usage:
#   scripts/time-commands.sh N LABEL 'COMMAND' [LABEL 'COMMAND']...
# Runs each COMMAND (a bash -c string, output discarded) once as a warm-up, then all of them in turn
# N times, and prints per COMMAND the median wall time and the median user+sys CPU time in ms, with the
# load average before and after. Taking turns makes a change of load hit every command alike; under
# load, compare the commands of one call only. A command that exits non-zero stops the run.
set -euo pipefail
(( $# >= 3 && ($# - 1) % 2 == 0 )) || { echo "usage: $0 N LABEL 'COMMAND' [LABEL 'COMMAND']..." >&2; exit 64; }
n=$1; shift
labels=(); cmds=()
while (( $# )); do labels+=("$1"); cmds+=("$2"); shift 2; done
k=${#cmds[@]}
declare -A wall cpu
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
for ((r=-1;r<n;r++)); do
  for ((j=0;j<k;j++)); do
    TIMEFORMAT='%R %U %S'
    # a command that fails is not timed: its few milliseconds would read as a fast start
    t=$( { time bash -c "${cmds[$j]}" >/dev/null 2>&1 || echo failed; } 2>&1 )
    if [[ $t == *failed* ]]; then
      echo "time-commands: '${labels[$j]}' failed (exit status not 0): ${cmds[$j]}" >&2
      exit 1
    fi
    read -r re us sy <<<"$t"
    (( r < 0 )) && continue
    wall[$j]+="$(awk -v a="$re" 'BEGIN{printf "%d", a*1000}') "
    cpu[$j]+="$(awk -v a="$us" -v b="$sy" 'BEGIN{printf "%d", (a+b)*1000}') "
  done
done
p50() { tr ' ' '\n' | grep . | sort -n | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}'; }
for ((j=0;j<k;j++)); do
  printf '%-40s wall p50 %4s ms  cpu p50 %4s ms\n' "${labels[$j]}" "$(echo "${wall[$j]}" | p50)" "$(echo "${cpu[$j]}" | p50)"
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
