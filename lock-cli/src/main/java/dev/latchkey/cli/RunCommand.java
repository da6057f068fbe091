package dev.latchkey.cli;

import dev.latchkey.Durations;
import dev.latchkey.Lease;
import dev.latchkey.LeaseLostException;
import dev.latchkey.LeaseOptions;
import dev.latchkey.LockBackendException;
import dev.latchkey.LockInfo;
import dev.latchkey.LockKeys;
import dev.latchkey.LockManager;
import dev.latchkey.LockTimeoutException;
import dev.latchkey.process.LockedProcess;
import dev.latchkey.process.LockedProcess.Guard;
import dev.latchkey.process.LockedProcess.GuardUnavailableException;
import dev.latchkey.spi.ManagedLease;
import java.io.IOException;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/**
 * {@code latchkey run}: CMD runs only while this process holds the lease on KEY, renewed by
 * heartbeat.
 *
 * <p><b>Guarantees.</b> CMD is not started unless the lock was acquired. The job — CMD's process
 * tree and every process carrying the lease's {@code LATCHKEY_LEASE_ID} ({@link LockedProcess}) — is
 * stopped by a guard process that outlives this JVM: the lock is released only once every process of
 * the job has exited (leftovers of CMD are waited for, or stopped with {@code --leftovers kill}). If
 * the lease is lost while CMD runs, the job is stopped (SIGTERM, SIGKILL after the grace) and the
 * status is 76; when the lease expired (renewals failed or were late), every process of it has exited
 * before the store can let anyone else in: the loss is signalled the lease's safety margin (TTL/5)
 * before the store's expiry, and {@link LockedProcess#graceFor} fits the grace and the SIGKILL into that margin,
 * refusing a {@code --grace} or {@code --ttl} where they cannot fit. If latchkey gets
 * SIGTERM/SIGINT/SIGHUP, the job is stopped the same way and the lease released before the JVM exits.
 * If this JVM dies (SIGKILL, a crash, the OOM killer), the guard kills the job at once. If only the
 * final release fails (store unreachable), CMD's status is kept, with a warning: the lease ends at
 * its TTL.
 *
 * <p><b>What remains.</b>
 * <ul>
 *   <li>A lease broken by {@code latchkey release --force} (or {@code run --force}) from elsewhere
 *       is lost at once: the next holder may be in before CMD is killed. So may one after a server
 *       ended the lease early (a PostgreSQL session terminated) or a record deleted by hand.</li>
 *   <li>Where the store frees the key the instant this JVM dies ({@code file://}, PostgreSQL advisory
 *       mode), the guard's reaction (tens of milliseconds) is a window in which a waiting contender
 *       may start beside the dying job.</li>
 *   <li>Processes of another user are not stopped (they are named, and never reported as
 *       terminated); a process that left the tree and cleared its environment is not found.</li>
 *   <li>{@code --on-lost=ignore} knowingly lets CMD run beside the next holder.</li>
 *   <li>A latchkey paused for longer than the margin (SIGSTOP, a suspended VM) notices the loss
 *       late. Fencing tokens protect a resource against that.</li>
 * </ul>
 *
 * <p>CMD learns its lease from its environment ({@link JobEnvironment}). {@code --bypass-lock} runs
 * CMD without any lock, so none of the above holds for it but the stop on latchkey's own
 * SIGTERM/SIGINT; it warns on stderr, and refuses the options that only concern the lock.
 */
@Command(name = "run", mixinStandardHelpOptions = true,
        description = {"Run CMD while holding the lock KEY; exit with CMD's status.",
            "If the lock is busy after --wait, exit 75 (or --busy-exit) naming the holder. If the lease is lost while "
                    + "CMD runs, CMD's process tree is killed (SIGTERM, SIGKILL after --grace) and the status is 76; "
                    + "when the lease expired, the tree is dead before the store can let anyone else in.",
            "CMD's environment describes its lease: LATCHKEY_KEY, LATCHKEY_LEASE_ID, LATCHKEY_TOKEN (the fencing "
                    + "token; 0 where the backend declares no FENCING_TOKENS capability), "
                    + "LATCHKEY_OWNER and LATCHKEY_BACKEND (the URI with every secret masked)."},
        exitCodeListHeading = "%nExit status:%n", exitCodeList = {
            "0..255:CMD's own status (128+n if killed by signal n).",
            "2:Usage error, bad or unknown URI, invalid key, a --grace or --ttl that cannot stop CMD in time.",
            "69:Backend unavailable.",
            "75:The lock was still busy after --wait (with --force: it changed hands after it was looked up); "
                    + "--busy-exit sets another status.",
            "76:The lease was lost while CMD ran (with --on-lost=kill); CMD's process tree was killed.",
            "126/127:CMD could not be executed / was not found."})
final class RunCommand implements Callable<Integer> {
    enum OnLost { kill, ignore }

    /** Options that only mean something when the lock is taken, refused with --bypass-lock. */
    private static final List<String> LOCK_ONLY_OPTIONS = List.of("--wait", "--ttl", "--force", "--on-lost", "--busy-exit");

    /** Backoff between acquire attempts that failed with a retriable backend error within {@code --wait}. */
    private static final long RETRY_BACKOFF_MIN_NANOS = 250_000_000L;
    private static final long RETRY_BACKOFF_MAX_NANOS = 4_000_000_000L;

    /** How long a busy lock's holder may stay invisible before we report it unnamed. */
    private static final long HOLDER_LOOKUP_NANOS = 2_000_000_000L;

    /** The grace where only latchkey's own signals stop CMD (--on-lost=ignore, --bypass-lock). */
    private static final Duration DEFAULT_GRACE = Duration.ofSeconds(10);

    @ParentCommand
    LatchkeyCommand root;

    @Spec
    CommandSpec spec;

    @Mixin
    UriOption uri;

    @Option(names = "--key", required = true, paramLabel = "KEY", description = "Name of the lock.")
    String key;

    @Option(names = "--wait", defaultValue = "0", paramLabel = "DURATION", converter = DurationConverter.class,
            description = {"How long to wait for a busy lock, e.g. 500ms, 30s, 5m (default: 0 = one try). "
                        + "Within the wait, an attempt that fails with a retriable backend error (timeout, "
                        + "server unreachable) is retried; the last error ends the run once the wait is over.",
                "Where staleness is judged by watching (s3:// on a custom endpoint), a crashed "
                        + "holder's key goes only to a waiter that watched it for the holder's TTL: use a "
                        + "--wait longer than that TTL, or 'latchkey release --force'."})
    Duration wait;

    @Option(names = "--ttl", defaultValue = "60s", paramLabel = "DURATION", converter = DurationConverter.class,
            description = "Lease time to live, renewed every ttl/3 while CMD runs; how long a crashed "
                    + "holder blocks others where the backend cannot see the crash (default: ${DEFAULT-VALUE}; "
                    + "at least 5s with --on-lost=kill, so that CMD can be killed within TTL/5).")
    Duration ttl;

    @Option(names = "--force", description = "Break the lease holding the lock first (as 'status' would show it) "
            + "and take the lock over: the previous job's 'latchkey run' finds the loss at its next heartbeat and "
            + "kills its CMD. If the lock changed hands meanwhile, the new holder is left alone and the lock is busy. "
            + "To run beside the holder instead, see --bypass-lock.")
    boolean force;

    @Option(names = "--on-lost", defaultValue = "kill", paramLabel = "kill|ignore",
            description = "If the lease is lost while CMD runs: kill = kill CMD's process tree before the store "
                    + "can let anyone else in (unless the lock was broken by force) and exit 76 (default); "
                    + "ignore = warn on stderr and let CMD finish (exit with its status): CMD then runs beside "
                    + "the next holder, who may get the lock TTL/5 after the loss, or at once if it was broken.")
    OnLost onLost;

    @Option(names = "--grace", paramLabel = "DURATION", converter = DurationConverter.class,
            description = "Time between SIGTERM and SIGKILL when CMD is stopped. With --on-lost=kill it must fit "
                    + "the lease's safety margin with room for the SIGKILL: at most TTL/10 (TTL/5 - 1s under "
                    + "a 10s TTL); default: that, at most 10s. With --on-lost=ignore (only latchkey's own "
                    + "SIGTERM/SIGINT stops CMD) any value; default 10s.")
    Duration grace;

    @Option(names = "--leftovers", defaultValue = "wait", paramLabel = "wait|kill",
            description = "Processes CMD leaves running when it exits by itself (a background job, a daemon, a double "
                    + "fork): wait = hold the lock until the last of them has exited, as flock(1) does (default); "
                    + "kill = stop them (SIGTERM, SIGKILL after --grace), as systemd stops a unit, then release.")
    LockedProcess.Leftovers leftovers;

    @Option(names = "--record-args", description = "Record CMD's arguments in the lock's metadata, which every "
            + "client of the store can read ('status', 'list'), also after release. By default only the program's "
            + "name and a hash of its arguments are recorded, since arguments may hold secrets.")
    boolean recordArgs;

    @Option(names = "--busy-exit", defaultValue = "75", paramLabel = "CODE",
            description = "Exit status when the lock is still busy after --wait, 0..255 (default: ${DEFAULT-VALUE}). "
                    + "0 = skip quietly, as cron wants: exit 0, with the one stderr line naming the holder.")
    int busyExit;

    @Option(names = "--bypass-lock",
            description = "Run CMD without taking the lock (as Meltano's --force runs a second pipeline), with a "
                    + "warning on stderr: CMD may run beside the holder, and gets no LATCHKEY_* lease variables. "
                    + "The backend is not contacted. Unlike --force, which breaks the holder's lock and takes it over "
                    + "(the previous job's 'latchkey run' finds the loss at its next heartbeat and kills it), nothing is "
                    + "broken. Refused with --wait, --ttl, --force, --on-lost and --busy-exit.")
    boolean bypassLock;

    @Parameters(arity = "1..*", paramLabel = "CMD", description = "The command and its arguments (after --).")
    List<String> command;

    @Override
    public Integer call() throws Exception {
        LockKeys.validate(key);
        if (busyExit < 0 || busyExit > 255) {
            throw new IllegalArgumentException("--busy-exit " + busyExit + " is not an exit status: use 0..255");
        }
        PrintWriter err = spec.commandLine().getErr();
        if (bypassLock) return runBypassing(err);
        Duration effectiveGrace = onLost == OnLost.kill ? LockedProcess.graceFor(ttl, grace) : graceOnSignalOnly();
        LeaseOptions options = LeaseOptions.ttl(ttl).withMetadata(Map.of("cmd", JobRecord.describe(command, recordArgs)));
        Guard guard; // started first: bash's start overlaps opening the backend and taking the lock
        try {
            guard = Guard.start(effectiveGrace, leftovers);
        } catch (GuardUnavailableException e) {
            return cannotRun(e, err);
        }
        try (LockManager locks = root.open(uri)) {
            if (force) breakHolder(locks, err);
            Optional<Lease> lease;
            if (wait.isZero()) {
                lease = locks.tryAcquire(key, options);
                if (lease.isEmpty()) return busy(err, holder(locks, Optional.empty()), "");
            } else {
                try {
                    lease = Optional.of(acquireWithin(locks, options));
                } catch (LockTimeoutException e) {
                    return busy(err, holder(locks, e.holder()), " after waiting " + Durations.format(wait));
                }
            }
            return runHolding(lease.get(), locks.description(), guard, err);
        } finally {
            guard.abandon(); // no job came: the guard exits by itself
        }
    }

    /**
     * {@code acquire} for the whole {@code --wait}: an attempt that fails with a retriable backend
     * error (a timeout, an unreachable server: the outcome of a claim may be unknown, and the
     * backend withdraws what it can in the background) is retried with backoff while the wait
     * lasts; the last error is thrown once it has run out.
     */
    private Lease acquireWithin(LockManager locks, LeaseOptions options) throws InterruptedException {
        long deadline = System.nanoTime() + wait.toNanos();
        long backoff = RETRY_BACKOFF_MIN_NANOS;
        while (true) {
            long left = deadline - System.nanoTime();
            try {
                return locks.acquire(key, Duration.ofNanos(Math.max(left, 1)), options);
            } catch (LockBackendException e) {
                long pause = Math.min(backoff, deadline - System.nanoTime());
                if (!e.isRetriable() || pause <= 0) throw e;
                TimeUnit.NANOSECONDS.sleep(pause);
                backoff = Math.min(backoff * 2, RETRY_BACKOFF_MAX_NANOS);
            }
        }
    }

    /**
     * {@code --bypass-lock}: CMD under the same supervision as with a lease (its tree is stopped on
     * SIGTERM/SIGINT to latchkey), but no lock is taken or looked at, so options about the lock are refused.
     */
    private int runBypassing(PrintWriter err) throws InterruptedException {
        refuseLockOnlyOptions();
        err.println("latchkey: WARNING: --bypass-lock: running CMD without taking the lock '" + key
                + "'; it may run beside whoever holds it");
        err.flush();
        CompletableFuture<LockedProcess> child = new CompletableFuture<>();
        Thread hook = stopOnSignal(child, () -> {}, () -> {});
        Guard guard = null;
        try {
            guard = Guard.start(graceOnSignalOnly(), leftovers);
            child.complete(LockedProcess.of(command).startWithoutLease(guard));
            return child.join().waitFor();
        } catch (IOException e) {
            return cannotRun(e, err);
        } finally {
            child.complete(null); // no-op once started; lets a signal's hook go on after a failed start
            unhook(hook);
            if (guard != null) guard.abandon();
        }
    }

    /** The grace where only latchkey's own SIGTERM/SIGINT stops CMD: no lease margin bounds it. */
    private Duration graceOnSignalOnly() {
        return grace != null ? grace : DEFAULT_GRACE;
    }

    private void refuseLockOnlyOptions() {
        List<String> lockOnly = LOCK_ONLY_OPTIONS.stream()
                .filter(spec.commandLine().getParseResult()::hasMatchedOption).toList();
        if (!lockOnly.isEmpty()) {
            throw new IllegalArgumentException("--bypass-lock takes no lock, so " + String.join(", ", lockOnly)
                    + " cannot apply: drop " + (lockOnly.size() == 1 ? "it" : "them")
                    + ", or drop --bypass-lock to run CMD under the lock");
        }
    }

    /**
     * {@code --force}: breaks the lease that holds KEY as {@code inspect} shows it, and only that one,
     * so a holder that took the key after the look is left alone (the acquisition then finds it busy).
     */
    private void breakHolder(LockManager locks, PrintWriter err) {
        Optional<LockInfo> seen = locks.inspect(key);
        if (seen.isEmpty()) return;
        LockInfo holder = seen.get();
        if (holder.leaseId() == null) {
            err.println("latchkey: did not break the lock '" + key + "': the store names no lease for its holder "
                    + holder.describeHolder() + ", so it could not be broken without risking a later holder; "
                    + "use 'latchkey release --force " + key + "' to break whoever holds it");
        } else if (locks.forceRelease(key, holder.leaseId())) {
            err.println("latchkey: broke the lock '" + key + "' held by " + holder.describeHolder());
        } else {
            Optional<LockInfo> now = locks.inspect(key);
            if (now.isPresent()) {
                err.println("latchkey: did not break the lock '" + key + "': it changed hands after it was looked up ("
                        + holder.describeHolder() + " is gone); the new holder " + now.get().describeHolder()
                        + " is left alone");
            }
        }
        err.flush();
    }

    /**
     * Who blocked us. A contender caught mid-acquisition may not have written its record yet when
     * we look (file://: its OS lock is taken before the record is), so look again briefly.
     */
    private Optional<LockInfo> holder(LockManager locks, Optional<LockInfo> known) throws InterruptedException {
        if (known.isPresent()) return known;
        long deadline = System.nanoTime() + HOLDER_LOOKUP_NANOS;
        while (true) {
            Optional<LockInfo> seen = locks.inspect(key);
            if (seen.isPresent() || System.nanoTime() > deadline) return seen;
            Thread.sleep(20);
        }
    }

    private int busy(PrintWriter err, Optional<LockInfo> holder, String waited) {
        err.println("latchkey: lock '" + key + "' is busy" + waited + ": held by "
                + holder.map(LockInfo::describeHolder).orElse("another holder (it may have just been released)"));
        err.flush();
        return busyExit;
    }

    private int runHolding(Lease lease, String backend, Guard guard, PrintWriter err) throws InterruptedException {
        AtomicBoolean released = new AtomicBoolean();
        // completed as soon as CMD has started (or failed to): a signal's hook waits for it, so a
        // signal that comes while CMD is starting still stops CMD
        CompletableFuture<LockedProcess> child = new CompletableFuture<>();
        // then give the lock back; registered before CMD starts, so no signal can leave CMD running without the lock
        Thread hook = stopOnSignal(child, guard::cancelSlotWait, () -> releaseQuietly(lease, released));
        int status;
        AtomicReference<LeaseLostException> lost = new AtomicReference<>();
        AtomicBoolean warned = new AtomicBoolean();
        // a loss found only by the release at the end came after CMD ended on its own: nothing was terminated
        AtomicBoolean cmdEnded = new AtomicBoolean();
        try {
            try {
                child.complete(LockedProcess.of(command).leftovers(leftovers).stopOnLoss(onLost == OnLost.kill)
                        .slotEnvironment(root.env()).start(guard, lease, backend)); // stops the job on loss
            } catch (IOException e) {
                releaseOnce(lease, released);
                return cannotRun(e, err);
            } finally {
                child.complete(null); // no-op once started; lets a signal's hook go on after a failed start
            }
            lease.onLost(e -> {
                lost.compareAndSet(null, e);
                if (cmdEnded.get()) return; // nothing left to stop or warn about here: the end of the run reports it
                if (onLost == OnLost.ignore) warnIgnored(err, warned, e);
            });
            status = child.join().waitFor(); // with a termination under way: once the whole tree is gone
            cmdEnded.set(true);
        } finally {
            unhook(hook);
        }
        // a lease known lost has nothing to give back (and its store may hang a release)
        if (lost.get() == null) releaseAtEnd(lease, released, lost, err);
        LeaseLostException e = lost.get();
        if (e == null) return status;
        if (onLost == OnLost.kill) {
            LockedProcess job = child.join();
            job.awaitTermination(); // a loss signalled just as CMD exited: its kill, if begun, ends first
            String survivors = job.survivors().orElse("");
            err.println("latchkey: lost the lock '" + key + "' while CMD ran" + (!job.isTerminating()
                    ? "; CMD had already ended by itself (status " + status + ")"
                    : !survivors.isEmpty() ? "; CMD was terminated, except " + survivors
                    : "; CMD was terminated" + (e.reason().ranOutLocally() ? " before anyone else could get the lock"
                            : ", but the next holder may have got the lock before")) + ": " + e.getMessage());
            err.flush();
            return ExitCodes.LEASE_LOST;
        }
        warnIgnored(err, warned, e);
        return status;
    }

    /** The release after CMD ended under a lease not known to be lost. */
    private void releaseAtEnd(Lease lease, AtomicBoolean released, AtomicReference<LeaseLostException> lost, PrintWriter err) {
        try {
            releaseOnce(lease, released);
        } catch (LeaseLostException e) {
            lost.compareAndSet(null, e);
        } catch (LockBackendException e) {
            // CMD finished under a valid lease; the store is unreachable now, and the lease ends at its TTL
            err.println("latchkey: WARNING: could not release the lock '" + key + "' (it ends at its TTL): "
                    + e.getMessage());
            err.flush();
        }
    }

    /** {@code --on-lost=ignore}: says once, and exactly, what going on means. */
    private void warnIgnored(PrintWriter err, AtomicBoolean warned, LeaseLostException e) {
        if (!warned.compareAndSet(false, true)) return;
        String nextHolder = e.reason().ranOutLocally()
                ? "who can get it " + Durations.format(ManagedLease.safetyMargin(ttl)) + " after the loss"
                : "who may have it already";
        err.println("latchkey: WARNING: lost the lock '" + key + "' while CMD ran (--on-lost=ignore: CMD was not"
                + " stopped, so it may run beside the next holder, " + nextHolder + "): " + e.getMessage());
        err.flush();
    }

    /**
     * SIGTERM/SIGINT to latchkey: stops CMD's tree (once started), then runs {@code then}, before the
     * JVM ends. Remove it with {@link #unhook} once CMD has exited.
     */
    private static Thread stopOnSignal(CompletableFuture<LockedProcess> child, Runnable first, Runnable then) {
        Thread hook = new Thread(() -> {
            first.run(); // ends a wait for the job slot: CMD is then not started
            LockedProcess running = child.join(); // null if CMD could not be started
            if (running != null) {
                running.terminate();
                try {
                    running.awaitTermination();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt(); // shutting down: the guard finishes the job without us
                }
            }
            then.run();
        }, "latchkey-shutdown");
        Runtime.getRuntime().addShutdownHook(hook);
        return hook;
    }

    private static void unhook(Thread hook) {
        try {
            Runtime.getRuntime().removeShutdownHook(hook);
        } catch (IllegalStateException shuttingDown) {
            // the hook is running and finishes the job itself
        }
    }

    /** CMD could not be started: says why, and exits as a shell would. */
    private int cannotRun(IOException e, PrintWriter err) {
        String msg = String.valueOf(e.getMessage());
        if (e instanceof GuardUnavailableException) {
            err.println("latchkey: " + msg);
            err.flush();
            return ExitCodes.UNAVAILABLE;
        }
        err.println("latchkey: cannot run '" + command.get(0) + "': " + msg);
        err.flush();
        return msg.contains("error=2,") ? ExitCodes.NOT_FOUND : ExitCodes.CANNOT_EXECUTE;
    }

    private static void releaseOnce(Lease lease, AtomicBoolean released) {
        if (released.compareAndSet(false, true)) lease.release();
    }

    private static void releaseQuietly(Lease lease, AtomicBoolean released) {
        try {
            releaseOnce(lease, released);
        } catch (RuntimeException e) {
            // shutting down: a lost or unreachable lease ends at its TTL anyway
        }
    }
}
