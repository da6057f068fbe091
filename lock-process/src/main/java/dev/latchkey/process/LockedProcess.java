package dev.latchkey.process;

import dev.latchkey.Lease;
import dev.latchkey.LockManager;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Consumer;

/**
 * An operating-system process run under a {@link Lease}, contained: while any process of the job
 * runs, the lock is not let go — also when this JVM dies. What {@code latchkey run} is built on,
 * for applications that start processes under {@link LockManager#callLocked} and the like.
 *
 * <p><b>Guarantee.</b> The job's <em>members</em> are the command's process tree as it is at each
 * look, and every process whose environment carries the lease's {@code LATCHKEY_LEASE_ID} (which
 * descendants inherit also when they leave the tree: {@code setsid}, a double fork, a daemon). A
 * guard process ({@code bash}) beside the command, fed by a pipe from this JVM:
 * <ul>
 *   <li>when the lease is lost ({@link Builder#stopOnLoss}, the default), or on {@link #terminate()},
 *       stops the job: SIGTERM to every member, SIGKILL after the grace to every member still running
 *       and every one found since. For a lease that expired, the default grace leaves the job dead
 *       before the store can let anyone else in (the loss is signalled a safety margin before the
 *       store's expiry; the grace fits inside it, with a reserve for the SIGKILL);</li>
 *   <li>when the command exits by itself, waits for the members it left running
 *       ({@link Leftovers#WAIT}, as {@code flock(1)} holds its lock) or stops them
 *       ({@link Leftovers#KILL}, as systemd stops a unit);</li>
 *   <li>when this JVM dies (SIGKILL, a crash, the OOM killer), reads the pipe's end and sends every
 *       member SIGKILL at once;</li>
 *   <li>holds the lock's host-local job slot ({@code flock(2)} on a per-user file named by the backend
 *       and the key) from before the command starts until the job has ended, so the next job of the
 *       lock on this host, started through this class, starts only once this one's members are gone —
 *       also where the store frees the key the instant this JVM dies ({@code file://}, a PostgreSQL
 *       advisory session).</li>
 * </ul>
 * {@link #waitFor()} returns once the command has exited and the guard has finished: no member is
 * left running, except those {@link #survivors()} names (processes of another user, e.g. through
 * {@code sudo}, which this user may not signal). Release the lease after {@code waitFor()}.
 *
 * <p><b>What remains.</b> A process that left the tree before a look found it <em>and</em> cleared
 * its environment is not found; when the guard is SIGKILLed too (a kill of the whole process group),
 * what the command moved out of its group survives. A lease broken by force, or ended early by the
 * server, may let the next holder in before the job is stopped. The job slot holds back contenders
 * of this user on this host only. Needs {@code bash}, and {@code flock(1)} for the slot (without it,
 * a warning, and no slot); on a system without {@code /proc} only the process tree is found.
 *
 * <p>The command's standard streams are what the {@link ProcessBuilder}'s redirects say (the
 * {@code latchkey} command inherits them); its environment gains the lease's {@code LATCHKEY_*}
 * variables. Not for Windows.
 */
public final class LockedProcess {
    /** What happens to processes the command leaves running when it exits by itself. */
    public enum Leftovers {
        /** The job lasts until the last of them has exited (as {@code flock(1)} holds its lock). */
        WAIT,
        /** They are stopped like a lost job (SIGTERM, SIGKILL after the grace), as systemd stops a unit. */
        KILL
    }

    private final Process process;
    private final JobGuard guard;
    /** Set once {@link #waitFor()} has seen the whole job end: a loss found later (at the release) stops nothing. */
    private volatile boolean ended;

    private LockedProcess(Process process, JobGuard guard) {
        this.process = process;
        this.guard = guard;
    }

    /**
     * A job of {@code command}: what the builder's redirects and environment say, plus the lease's
     * variables; its working directory and redirects are taken as they are when the job starts.
     */
    public static Builder of(ProcessBuilder command) {
        return new Builder(command);
    }

    /** A job of {@code command} with the standard streams of this JVM ({@link ProcessBuilder#inheritIO()}). */
    public static Builder of(List<String> command) {
        return new Builder(new ProcessBuilder(command).inheritIO());
    }

    /**
     * The grace a job under a lease of {@code ttl} gets when stopped on loss: {@code requested} if it
     * fits the lease's safety margin with room for the SIGKILL, or the longest that fits (at most 10 s)
     * when {@code requested} is null.
     *
     * @throws IllegalArgumentException the TTL is too short (under 5 s) or the grace does not fit; the
     *         message names the limit
     */
    public static Duration graceFor(Duration ttl, Duration requested) {
        return KillWindow.grace(ttl, requested);
    }

    /** How a {@link LockedProcess} is started; each setting has a default that needs no thought. */
    public static final class Builder {
        private final ProcessBuilder command;
        private Duration grace;
        private Leftovers leftovers = Leftovers.WAIT;
        private boolean stopOnLoss = true;
        private Map<String, String> environment = System.getenv();

        private Builder(ProcessBuilder command) {
            this.command = Objects.requireNonNull(command, "command");
        }

        /**
         * Time between SIGTERM and SIGKILL when the job is stopped. Default: under {@link #stopOnLoss},
         * the longest that fits the lease's safety margin, at most 10 s ({@link #graceFor}); else 10 s.
         */
        public Builder grace(Duration grace) {
            this.grace = Objects.requireNonNull(grace, "grace");
            return this;
        }

        /** What happens to processes the command leaves running when it exits by itself; default {@link Leftovers#WAIT}. */
        public Builder leftovers(Leftovers leftovers) {
            this.leftovers = Objects.requireNonNull(leftovers, "leftovers");
            return this;
        }

        /**
         * Whether the job is stopped when the lease is lost (default true). False knowingly lets it run
         * beside the next holder; {@link #terminate()} still stops it, and this JVM's death still kills it.
         */
        public Builder stopOnLoss(boolean stopOnLoss) {
            this.stopOnLoss = stopOnLoss;
            return this;
        }

        /**
         * The environment whose {@code XDG_RUNTIME_DIR} locates the job slots' directory (else
         * {@code /tmp/latchkey-jobs-UID}); default this JVM's.
         */
        public Builder slotEnvironment(Map<String, String> environment) {
            this.environment = environment;
            return this;
        }

        /**
         * Starts the job under {@code lease}, held on {@code locks}: first takes the lock's job slot,
         * waiting while the previous job of the lock on this host is still ending.
         *
         * @throws IOException the command could not be started (its message says why), or the guard
         *         could not be started or made ready ({@link GuardUnavailableException}); nothing runs
         * @throws IllegalArgumentException the grace does not fit the lease's TTL ({@link #graceFor})
         */
        public LockedProcess start(LockManager locks, Lease lease) throws IOException {
            return start(lease, locks.description());
        }

        /** {@link #start(LockManager, Lease)} for a lease held on the backend {@code backend} describes ({@link LockManager#description()}). */
        public LockedProcess start(Lease lease, String backend) throws IOException {
            Duration g = stopOnLoss ? KillWindow.grace(lease.ttl(), grace) : grace != null ? grace : KillWindow.DEFAULT_GRACE;
            return start(Guard.start(g, leftovers), lease, backend);
        }

        /**
         * Starts the job under {@code guard} (started earlier, so that its start overlapped the
         * acquisition), whose grace the caller chose.
         */
        public LockedProcess start(Guard guard, Lease lease, String backend) throws IOException {
            LockedProcess job = launch(guard.guard, env -> JobEnvironment.describe(lease, backend, env), lease.leaseId(),
                    JobSlot.of(backend, lease.key(), environment));
            if (stopOnLoss) lease.onLost(e -> job.terminate()); // a write to the guard's pipe: no thread, no wait
            return job;
        }

        /**
         * Starts the job under no lease, deliberately ({@code latchkey run --bypass-lock}): contained as
         * above (stopped by {@link #terminate()}, killed when this JVM dies), but no slot is taken, and
         * the environment carries no {@code LATCHKEY_*} variable. The grace is the one set, or 10 s.
         */
        public LockedProcess startWithoutLease(Guard guard) throws IOException {
            return launch(guard.guard, JobEnvironment::clear, null, Optional.empty());
        }

        private LockedProcess launch(JobGuard guard, Consumer<Map<String, String>> env, String marker,
                                     Optional<Path> slot) throws IOException {
            if (marker != null) guard.mark(marker);
            if (slot.isPresent()) guard.takeSlot(slot.get());
            env.accept(command.environment());
            Process process;
            try {
                process = command.start();
            } catch (IOException e) {
                guard.ended(); // nothing ran: the guard finds no member and exits
                throw e;
            }
            guard.job(process.pid());
            return new LockedProcess(process, guard);
        }
    }

    /**
     * A job's guard process, started ahead of the lock, so that its start ({@code bash}, a few
     * milliseconds) overlaps the acquisition; {@link #abandon()} it when no job comes.
     */
    public static final class Guard {
        private final JobGuard guard;

        private Guard(JobGuard guard) {
            this.guard = guard;
        }

        /**
         * Starts a guard.
         *
         * @param grace     between SIGTERM and SIGKILL when the job is stopped ({@link #graceFor})
         * @throws GuardUnavailableException no {@code bash} on the PATH
         */
        public static Guard start(Duration grace, Leftovers leftovers) throws GuardUnavailableException {
            return new Guard(JobGuard.start(grace, leftovers));
        }

        /**
         * From a signal's shutdown hook: a wait for the job slot ends, and the command is not started
         * ({@link GuardUnavailableException}). Does nothing once it runs.
         */
        public void cancelSlotWait() {
            guard.cancelSlotWait();
        }

        /** No job came (the lock was busy, the backend failed): the guard exits by itself. Does nothing once a job was started. */
        public void abandon() {
            guard.abandon();
        }
    }

    /** No guard could be started or made ready: the command was not started. */
    public static final class GuardUnavailableException extends IOException {
        GuardUnavailableException(String message, IOException cause) {
            super(message, cause);
        }
    }

    /** The command's process: its pid, and its streams where the builder's redirects piped them. */
    public Process process() {
        return process;
    }

    /**
     * The command's exit status ({@code 128+n} if signal {@code n} killed it, as the JDK reports it on
     * Unix), once it has exited and the guard has finished with the rest of the job.
     */
    public int waitFor() throws InterruptedException {
        int status = process.waitFor();
        guard.ended();
        guard.awaitExit();
        ended = true;
        return status;
    }

    /** Returns once the guard has finished: the command and every member it found have ended. */
    public void awaitTermination() throws InterruptedException {
        guard.awaitExit();
    }

    /** True once the job is being stopped ({@link #terminate()}, or the lease's loss). */
    public boolean isTerminating() {
        return guard.stopRequested();
    }

    /**
     * Stops the job (SIGTERM, SIGKILL after the grace); returns at once, starts no thread, and may be
     * called from a lease-loss listener. Idempotent. Should even that fail (a full heap), this JVM
     * halts, and the guard kills the job. Does nothing once {@link #waitFor()} has returned.
     */
    public void terminate() {
        if (!ended) guard.stop();
    }

    /**
     * After {@link #waitFor()} or {@link #awaitTermination()}: what the guard could not stop (it named
     * them on stderr), or empty.
     */
    public Optional<String> survivors() {
        String s = guard.survivors();
        return s.isEmpty() ? Optional.empty() : Optional.of(s);
    }
}
