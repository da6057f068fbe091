package dev.latchkey.clickhouse;

import dev.latchkey.LockBackendException;
import dev.latchkey.spi.LeaseRuntime;
import dev.latchkey.spi.TimeSource;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.concurrent.TimeUnit;

/**
 * Candidates a manager planted and must take out again, tombstoned in the background: in order, one
 * at a time on the manager's renewers (so a store that hangs them keeps at most one renewer busy,
 * and the others free for heartbeats), backing off from 100 ms to 5 s after a failure. Each is
 * retried until its deadline — its TTL counted from when its insert was sent — after which it has
 * expired on the server anyway, unless the server executed the insert later than that. Closing
 * drops what is pending: those rows end at their TTL.
 */
final class CandidateWithdrawals {
    private static final System.Logger LOG = System.getLogger(CandidateWithdrawals.class.getName());
    private static final long FIRST_RETRY_NANOS = TimeUnit.MILLISECONDS.toNanos(100);
    private static final long MAX_RETRY_NANOS = TimeUnit.SECONDS.toNanos(5);

    /** Writes the tombstone of one candidate. */
    interface Tombstone {
        void write(ClickHouseLockManager.Candidate row);
    }

    private record Pending(ClickHouseLockManager.Candidate row, long untilNanos) {}

    private final LeaseRuntime runtime;
    private final TimeSource time;
    private final Tombstone tombstone;
    private final Object lock = new Object();
    private final ArrayDeque<Pending> pending = new ArrayDeque<>(); // guarded by lock
    private boolean draining; // guarded by lock: a drain is running or scheduled
    private long retryNanos = FIRST_RETRY_NANOS; // guarded by lock
    private boolean closed; // guarded by lock

    CandidateWithdrawals(LeaseRuntime runtime, Tombstone tombstone) {
        this.runtime = runtime;
        this.time = runtime.time();
        this.tombstone = tombstone;
    }

    /** Tombstones {@code row} in the background, until {@code untilNanos} ({@link TimeSource#nanoTime()}). */
    void add(ClickHouseLockManager.Candidate row, long untilNanos) {
        synchronized (lock) {
            if (closed) return;
            pending.addLast(new Pending(row, untilNanos));
            if (draining) return;
            draining = true;
        }
        runtime.later(Duration.ZERO, this::drain);
    }

    void close() {
        synchronized (lock) {
            closed = true;
            pending.clear();
        }
    }

    private void drain() {
        while (true) {
            Pending next;
            synchronized (lock) {
                next = pending.peekFirst();
                if (next == null) {
                    draining = false;
                    retryNanos = FIRST_RETRY_NANOS;
                    return;
                }
            }
            if (time.nanoTime() - next.untilNanos() < 0) {
                try {
                    tombstone.write(next.row());
                } catch (LockBackendException e) {
                    long delay;
                    synchronized (lock) {
                        delay = retryNanos;
                        retryNanos = Math.min(MAX_RETRY_NANOS, delay * 2);
                    }
                    LOG.log(Level.DEBUG, "withdrawing candidate " + next.row().lockId() + " of '" + next.row().key()
                            + "' failed; retrying in " + TimeUnit.NANOSECONDS.toMillis(delay) + " ms", e);
                    runtime.later(Duration.ofNanos(delay), this::drain);
                    return;
                }
            }
            synchronized (lock) {
                pending.remove(next); // close() may have cleared it meanwhile
                retryNanos = FIRST_RETRY_NANOS;
            }
        }
    }
}
