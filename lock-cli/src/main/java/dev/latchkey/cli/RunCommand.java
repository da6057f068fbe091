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
import java.io.IOException;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
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
 * heartbeat. Guarantees: CMD is not started unless the lock was acquired; if the lease is lost
 * while CMD runs (renewal failed, broken by {@code release --force}, taken over), CMD's process
 * tree is terminated (default) and the status is 76; if latchkey itself gets SIGTERM/SIGINT, CMD
 * is terminated and the lease released before the JVM exits. If only the final release fails
 * (store unreachable), CMD's status is kept, with a warning: the lease ends at its TTL. After
 * {@code kill -9} of latchkey the lease is not released here: the backend reclaims it (at once for
 * {@code file://}, whose OS lock dies with the process; otherwise after the TTL).
 */
@Command(name = "run", mixinStandardHelpOptions = true,
        description = {"Run CMD while holding the lock KEY; exit with CMD's status.",
            "If the lock is busy after --wait, exit 75 naming the holder. If the lease is lost while "
                    + "CMD runs, CMD is terminated (SIGTERM, SIGKILL after --grace) and the status is 76."},
        exitCodeListHeading = "%nExit status:%n", exitCodeList = {
            "0..255:CMD's own status (128+n if killed by signal n).",
            "2:Usage error, bad or unknown URI, invalid key.",
            "69:Backend unavailable.",
            "75:The lock was still busy after --wait.",
            "76:The lease was lost while CMD ran (with --on-lost=kill).",
            "126/127:CMD could not be executed / was not found."})
final class RunCommand implements Callable<Integer> {
    enum OnLost { kill, ignore }

    /** How long a busy lock's holder may stay invisible before we report it unnamed. */
    private static final long HOLDER_LOOKUP_NANOS = 2_000_000_000L;

    @ParentCommand
    LatchkeyCommand root;

    @Spec
    CommandSpec spec;

    @Mixin
    UriOption uri;

    @Option(names = "--key", required = true, paramLabel = "KEY", description = "Name of the lock.")
    String key;

    @Option(names = "--wait", defaultValue = "0", paramLabel = "DURATION", converter = DurationConverter.class,
            description = "How long to wait for a busy lock, e.g. 500ms, 30s, 5m (default: 0 = one try).")
    Duration wait;

    @Option(names = "--ttl", defaultValue = "60s", paramLabel = "DURATION", converter = DurationConverter.class,
            description = "Lease time to live, renewed every ttl/3 while CMD runs; how long a crashed "
                    + "holder blocks others where the backend cannot see the crash (default: ${DEFAULT-VALUE}).")
    Duration ttl;

    @Option(names = "--force", description = "Break the existing lock first, whoever holds it.")
    boolean force;

    @Option(names = "--on-lost", defaultValue = "kill", paramLabel = "kill|ignore",
            description = "If the lease is lost while CMD runs: kill = terminate CMD and exit 76 "
                    + "(default); ignore = warn on stderr and let CMD finish (exit with its status).")
    OnLost onLost;

    @Option(names = "--grace", defaultValue = "10s", paramLabel = "DURATION", converter = DurationConverter.class,
            description = "Time between SIGTERM and SIGKILL when CMD is terminated (default: ${DEFAULT-VALUE}).")
    Duration grace;

    @Parameters(arity = "1..*", paramLabel = "CMD", description = "The command and its arguments (after --).")
    List<String> command;

    @Override
    public Integer call() throws Exception {
        LockKeys.validate(key);
        LeaseOptions options = LeaseOptions.ttl(ttl)
                .withMetadata(Map.of("cmd", LatchkeyCommand.summary(command, 256)));
        PrintWriter err = spec.commandLine().getErr();
        try (LockManager locks = root.open(uri)) {
            if (force) breakLock(locks, err);
            Optional<Lease> lease;
            if (wait.isZero()) {
                lease = locks.tryAcquire(key, options);
                if (lease.isEmpty()) return busy(err, holder(locks, Optional.empty()), "");
            } else {
                try {
                    lease = Optional.of(locks.acquire(key, wait, options));
                } catch (LockTimeoutException e) {
                    return busy(err, holder(locks, e.holder()), " after waiting " + Durations.format(wait));
                }
            }
            return runHolding(lease.get(), err);
        }
    }

    private void breakLock(LockManager locks, PrintWriter err) {
        Optional<LockInfo> holder = locks.inspect(key);
        if (locks.forceRelease(key)) {
            err.println("latchkey: broke the lock '" + key + "' held by "
                    + holder.map(LockInfo::describeHolder).orElse("another holder"));
            err.flush();
        }
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
        return ExitCodes.BUSY;
    }

    private int runHolding(Lease lease, PrintWriter err) throws InterruptedException {
        AtomicBoolean released = new AtomicBoolean();
        AtomicReference<ChildProcess> child = new AtomicReference<>();
        // SIGTERM/SIGINT to latchkey: stop CMD, then give the lock back before the JVM ends.
        // Registered before CMD starts, so no signal can leave CMD running without the lock.
        Thread hook = new Thread(() -> {
            ChildProcess running = child.get();
            if (running != null) running.terminateAndWait();
            releaseQuietly(lease, released);
        }, "latchkey-shutdown");
        Runtime.getRuntime().addShutdownHook(hook);
        int status;
        AtomicReference<LeaseLostException> lost = new AtomicReference<>();
        AtomicBoolean warned = new AtomicBoolean();
        try {
            try {
                child.set(ChildProcess.start(command, grace));
            } catch (IOException e) {
                releaseOnce(lease, released);
                String msg = String.valueOf(e.getMessage());
                err.println("latchkey: cannot run '" + command.get(0) + "': " + msg);
                err.flush();
                return msg.contains("error=2,") ? ExitCodes.NOT_FOUND : ExitCodes.CANNOT_EXECUTE;
            }
            lease.onLost(e -> {
                lost.compareAndSet(null, e);
                if (onLost == OnLost.kill) {
                    child.get().terminateAsync();
                } else if (warned.compareAndSet(false, true)) {
                    err.println("latchkey: WARNING: lost the lock '" + key + "' while CMD runs: " + e.getMessage());
                    err.flush();
                }
            });
            status = child.get().waitFor();
        } finally {
            try {
                Runtime.getRuntime().removeShutdownHook(hook);
            } catch (IllegalStateException shuttingDown) {
                // the hook is running and releases the lease itself
            }
        }
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
        LeaseLostException e = lost.get();
        if (e == null) return status;
        if (onLost == OnLost.kill) {
            err.println("latchkey: lost the lock '" + key + "' while CMD ran"
                    + (child.get().isTerminating() ? "; CMD was terminated" : "") + ": " + e.getMessage());
            err.flush();
            return ExitCodes.LEASE_LOST;
        }
        if (warned.compareAndSet(false, true)) {
            err.println("latchkey: WARNING: lost the lock '" + key + "' while CMD ran: " + e.getMessage());
            err.flush();
        }
        return status;
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
