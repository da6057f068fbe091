# latchkey's job guard: a small bash process beside CMD that outlives latchkey's JVM long enough to
# kill every process of the job. Run as: bash -c SCRIPT latchkey-guard GRACE LEFTOVERS
# It is started before the lock is taken (so that its start costs no time after), and its stdin is a
# pipe from the JVM, which writes one request a line:
#   mark ID   CMD's environment will carry LATCHKEY_LEASE_ID=ID
#   slot PATH take an exclusive flock(2) on PATH, kept until the guard exits (when the job has ended),
#             then print "ready": the JVM starts CMD only after that, so a job of the same lock on
#             this host never starts while the previous one's guard still has processes to kill
#   job PID   CMD was started as PID (the root of the tree to stop)
#   stop      stop the job: SIGTERM to every member, SIGKILL after GRACE ms; exit when all are gone
#   ended     CMD exited by itself: LEFTOVERS=kill stops the rest as for stop; LEFTOVERS=wait exits
#             once no member is left
# End of input means the JVM died (kill -9, a crash, the OOM killer): every member gets SIGKILL at
# once, since the store may free the key as soon as the JVM is gone (before any mark or job: the JVM
# gave the guard up, as when the lock was busy, and it just exits).
# Members: CMD's process tree as it is at each look, and every process whose environment carries
# LATCHKEY_LEASE_ID=ID (which CMD's descendants inherit, also after they left the tree: setsid, a
# double fork, a daemon). Zombies count as gone. The guard exits 0 once no member is left; 3 if some
# could not be killed.
grace=$1 leftovers=$2
trap '' INT TERM HUP QUIT   # only SIGKILL ends the guard before the job: the JVM's signals reach CMD itself
job= marker=
nap=

# sleeps $1 seconds: read -t on a pipe nothing is written to, opened on first use (not every guard sleeps)
nap() {
  [[ -n $nap ]] || exec {nap}<> <(:)
  read -r -t "$1" -u "$nap" _
}

# "pid state ppid" of every process: from /proc on Linux, else from ps (macOS, the BSDs)
processes() {
  if [[ -d /proc/self ]]; then
    # the command name in parentheses may hold spaces and ")"
    cat /proc/[0-9]*/stat 2>/dev/null | awk '{ i = length($0); while (i > 0 && substr($0, i, 1) != ")") i--
      split(substr($0, i + 2), f, " "); print $1, f[1], f[2] }'
  else
    ps -A -o pid= -o stat= -o ppid= 2>/dev/null
  fi
}

# the pids of the members, one a line (the lease id is looked for in /proc only: elsewhere the tree alone)
members() {
  local marked=
  [[ -n $marker && -d /proc/self ]] && marked=$(grep -slzxF -- "LATCHKEY_LEASE_ID=$marker" /proc/[0-9]*/environ)
  [[ -n $job$marked ]] || return 0  # no root: no member (the common end: CMD exited, left nothing behind)
  processes | awk -v roots="$job ${marked//[!0-9]/ }" -v me=$$ '
    { state[$1] = $2; parent[$1] = $3 }
    END {
      n = split(roots, r, " "); for (k = 1; k <= n; k++) if (r[k] in state) in_job[r[k]] = 1
      do { grew = 0; for (p in parent) if (!(p in in_job) && (parent[p] in in_job)) { in_job[p] = 1; grew = 1 } } while (grew)
      for (p in in_job) if (p != me && parent[p] != me && state[p] !~ /^[ZX]/) print p
    }'
}

# true while one of the given pids still runs (a zombie has ended)
running() {
  local p s
  for p; do
    if [[ -d /proc/self ]]; then
      read -r s 2>/dev/null < "/proc/$p/stat" || continue
      s=${s##*) }
    else
      s=$(ps -o stat= -p "$p" 2>/dev/null) || continue
      s=${s##* }
    fi
    [[ ${s:0:1} == [ZX] ]] || return 0
  done
  return 1
}

# SIGTERM to every member, SIGKILL after $1 ms (at once for 0) to every member left and every one
# found since; returns once none is left but those this user may not signal (another user's, as
# through sudo), which are named on stderr, and then fails
stop() {
  local pids p ticks denied=
  pids=$(members)
  if [[ $1 != 0 && -n $pids ]]; then
    kill -TERM $pids 2>/dev/null
    ticks=$(( $1 / 10 ))
    while (( ticks-- > 0 )) && running $pids; do nap 0.01; done
  fi
  while pids=$(members); [[ -n $pids ]]; do
    local left=
    for p in $pids; do
      [[ " $denied " == *" $p "* ]] && continue
      kill -KILL "$p" 2>/dev/null || { running "$p" && denied+=" $p"; }
      left+=" $p"
    done
    [[ -n $left ]] || break
    nap 0.01
  done
  [[ -z $denied ]] && return 0
  for p in $denied; do
    echo "latchkey: could not kill process $p of CMD ($(ps -o user=,args= -p "$p" 2>/dev/null || echo "not ours to signal")): it may still run" >&2
  done
  return 3
}

while :; do
  if ! read -r request arg; then
    [[ -n $job$marker ]] || exit 0
    stop 0; status=$?
    echo "latchkey: latchkey's JVM ended while CMD ran: CMD's processes were killed" >&2
    exit $status
  fi
  case $request in
    mark) marker=$arg ;;
    slot)
      if ! command -v flock >/dev/null; then
        echo "latchkey: WARNING: no flock(1) on the PATH (util-linux): a run of this lock on this host may start before the previous job has ended" >&2
      elif exec {slotfd}>>"$arg"; then
        if ! flock -n -x "$slotfd" 2>/dev/null; then
          echo "latchkey: waiting for the processes of the previous job of this lock on this host to end" >&2
          flock -x "$slotfd" || echo "latchkey: WARNING: could not lock $arg: the previous job may still run" >&2
        fi
      else
        echo "latchkey: WARNING: could not open the job slot $arg: a run of this lock on this host may start before the previous job has ended" >&2
      fi
      echo ready ;;
    job) job=$arg ;;
    stop) stop "$grace"; exit ;;
    ended)
      job=  # reaped by the JVM: its pid may be reused
      [[ $leftovers == kill ]] && { stop "$grace"; exit; }
      # wait for the processes CMD left running; a stop request or the JVM's end still applies
      while [[ -n $(members) ]]; do
        if read -r -t 0.2 request arg; then
          [[ $request == stop ]] && { stop "$grace"; exit; }
        elif (( $? <= 128 )); then
          stop 0; status=$?
          echo "latchkey: latchkey's JVM ended while CMD's leftover processes ran: they were killed" >&2
          exit $status
        fi
      done
      exit 0 ;;
  esac
done
