package dev.latchkey.cli;

import dev.latchkey.Durations;
import dev.latchkey.Lease;
import dev.latchkey.LeaseOptions;
import dev.latchkey.LockBackendException;
import dev.latchkey.LockInfo;
import dev.latchkey.LockManager;
import dev.latchkey.LockTimeoutException;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * How {@code latchkey run} takes KEY: a lease is returned only if it was acquired; otherwise the lock
 * was busy for the whole wait and one stderr line names its holder (or says none could be seen).
 * A retriable backend error within the wait is retried with backoff; any other, or the last one once
 * the wait is over, is thrown. {@code --force} breaks only the holder it looked up, never a later one.
 */
final class Acquisition {
    /** Backoff between acquire attempts that failed with a retriable backend error within {@code --wait}. */
    private static final long RETRY_BACKOFF_MIN_NANOS = 250_000_000L;
    private static final long RETRY_BACKOFF_MAX_NANOS = 4_000_000_000L;

    /** How long a busy lock's holder may stay invisible before we report it unnamed. */
    private static final long HOLDER_LOOKUP_NANOS = 2_000_000_000L;

    private final LockManager locks;
    private final String key;
    private final PrintWriter err;

    Acquisition(LockManager locks, String key, PrintWriter err) {
        this.locks = locks;
        this.key = key;
        this.err = err;
    }

    /**
     * One try ({@code wait} zero) or {@code acquire} for the whole wait; empty when the lock stayed
     * busy, after the line naming its holder.
     */
    Optional<Lease> take(Duration wait, LeaseOptions options) throws InterruptedException {
        if (wait.isZero()) {
            Optional<Lease> lease = locks.tryAcquire(key, options);
            if (lease.isEmpty()) reportBusy(holder(Optional.empty()), "");
            return lease;
        }
        try {
            return Optional.of(acquireWithin(wait, options));
        } catch (LockTimeoutException e) {
            reportBusy(holder(e.holder()), " after waiting " + Durations.format(wait));
            return Optional.empty();
        }
    }

    /**
     * {@code acquire} for the whole {@code wait}: an attempt that fails with a retriable backend
     * error (a timeout, an unreachable server: the outcome of a claim may be unknown, and the
     * backend withdraws what it can in the background) is retried with backoff while the wait
     * lasts; the last error is thrown once it has run out.
     */
    private Lease acquireWithin(Duration wait, LeaseOptions options) throws InterruptedException {
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
     * {@code --force}: breaks the lease that holds KEY as {@code inspect} shows it, and only that one,
     * so a holder that took the key after the look is left alone (the acquisition then finds it busy).
     */
    void breakHolder() {
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
    private Optional<LockInfo> holder(Optional<LockInfo> known) throws InterruptedException {
        if (known.isPresent()) return known;
        long deadline = System.nanoTime() + HOLDER_LOOKUP_NANOS;
        while (true) {
            Optional<LockInfo> seen = locks.inspect(key);
            if (seen.isPresent() || System.nanoTime() > deadline) return seen;
            Thread.sleep(20);
        }
    }

    private void reportBusy(Optional<LockInfo> holder, String waited) {
        err.println("latchkey: lock '" + key + "' is busy" + waited + ": held by "
                + holder.map(LockInfo::describeHolder).orElse("another holder (it may have just been released)"));
        err.flush();
    }
}
