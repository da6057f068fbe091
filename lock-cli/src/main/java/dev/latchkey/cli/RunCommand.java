package dev.latchkey.cli;

import dev.latchkey.Lease;
import dev.latchkey.LeaseOptions;
import dev.latchkey.LockKeys;
import dev.latchkey.LockManager;
import dev.latchkey.process.LockedProcess;
import dev.latchkey.process.LockedProcess.Guard;
import dev.latchkey.process.LockedProcess.GuardUnavailableException;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
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
 *
 * <p>This class is the options and their checks; the steps are {@link Acquisition} (taking the lock,
 * {@code --force}, the busy report), {@link LeasedRun} (CMD under the lease, the loss, the release) and
 * {@link BypassRun}, each stopping CMD on latchkey's own signals through {@link SignalStop}.
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
        if (bypassLock) {
            refuseLockOnlyOptions();
            return BypassRun.run(key, command, graceOnSignalOnly(), leftovers, err);
        }
        Duration effectiveGrace = onLost == OnLost.kill ? LockedProcess.graceFor(ttl, grace) : graceOnSignalOnly();
        LeaseOptions options = LeaseOptions.ttl(ttl).withMetadata(Map.of("cmd", JobRecord.describe(command, recordArgs)));
        Guard guard; // started first: bash's start overlaps opening the backend and taking the lock
        try {
            guard = Guard.start(effectiveGrace, leftovers);
        } catch (GuardUnavailableException e) {
            return StartFailure.report(e, command.get(0), err);
        }
        try (LockManager locks = root.open(uri)) {
            Acquisition acquisition = new Acquisition(locks, key, err);
            if (force) acquisition.breakHolder();
            Optional<Lease> lease = acquisition.take(wait, options);
            if (lease.isEmpty()) return busyExit;
            return new LeasedRun(key, command, onLost == OnLost.kill, leftovers, ttl, root.env(), err)
                    .run(lease.get(), locks.description(), guard);
        } finally {
            guard.abandon(); // no job came: the guard exits by itself
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
}
