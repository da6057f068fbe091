package dev.latchkey.clickhouse;

import dev.latchkey.LockBackendException;
import dev.latchkey.spi.LeaseRuntime;
import dev.latchkey.spi.TimeSource;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Candidates a manager planted and must take out again, tombstoned in the background: in order, one
 * at a time on the manager's renewers (so a store that hangs them keeps at most one renewer busy,
 * and the others free for heartbeats), backing off from 100 ms to 5 s after a failure. Each is
 * retried until its deadline — its TTL counted from when its insert was sent — after which it has
 * expired on the server anyway, unless the server executed the insert later than that. Closing
 * drops what is pending: those rows end at their TTL. The lock guards the queue only: no tombstone is
 * written and nothing is scheduled while it is held.
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
    private final ReentrantLock lock = new ReentrantLock();
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
        lock.lock();
        try {
            if (closed) return;
            pending.addLast(new Pending(row, untilNanos));
            if (draining) return;
            draining = true;
        } finally {
            lock.unlock();
        }
        runtime.later(Duration.ZERO, this::drain);
    }

    void close() {
        lock.lock();
        try {
            closed = true;
            pending.clear();
        } finally {
            lock.unlock();
        }
    }

    private void drain() {
        while (true) {
            Pending next;
            lock.lock();
            try {
                next = pending.peekFirst();
                if (next == null) {
                    draining = false;
                    retryNanos = FIRST_RETRY_NANOS;
                    return;
                }
            } finally {
                lock.unlock();
            }
            if (time.nanoTime() - next.untilNanos() < 0) {
                try {
                    tombstone.write(next.row());
                } catch (LockBackendException e) {
                    long delay;
                    lock.lock();
                    try {
                        delay = retryNanos;
                        retryNanos = Math.min(MAX_RETRY_NANOS, delay * 2);
                    } finally {
                        lock.unlock();
                    }
                    LOG.log(Level.DEBUG, "withdrawing candidate " + next.row().lockId() + " of '" + next.row().key()
                            + "' failed; retrying in " + TimeUnit.NANOSECONDS.toMillis(delay) + " ms", e);
                    runtime.later(Duration.ofNanos(delay), this::drain);
                    return;
                }
            }
            lock.lock();
            try {
                pending.remove(next); // close() may have cleared it meanwhile
                retryNanos = FIRST_RETRY_NANOS;
            } finally {
                lock.unlock();
            }
        }
    }
}
