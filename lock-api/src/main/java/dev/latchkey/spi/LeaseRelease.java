package dev.latchkey.spi;

import static dev.latchkey.spi.ManagedLease.LOG;

import dev.latchkey.LeaseLostException;
import dev.latchkey.LockBackendException;
import dev.latchkey.spi.ManagedLease.State;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * How one {@link ManagedLease} ends by release: the caller's {@link ManagedLease#release()}, its
 * background retry, and giving back a lease that {@link ManagedLease#start()} found invalid on
 * arrival.
 *
 * <p><b>Guarantee.</b> A release ends the lease locally the moment it is called, whatever the store
 * answers: the lease is invalid at once and no renewal starts after it (one already in flight
 * finishes first: store operations of a lease are serialised). A release that finds the lease
 * lost throws that loss. One the store does not confirm throws a {@link LockBackendException}
 * saying so and is retried in the background — one chain of retries per lease, 100 ms after the
 * failure and four times longer each time — until it lands, the lease turns out lost or released
 * by the caller's own retry, or the next try would come after the store's expiry of the lease
 * (its deadline plus the margin); the lock frees by its TTL at the latest all the same. The
 * backend's {@link ManagedLease#afterRelease()} runs when the lease has ended by release
 * (confirmed, found lost, or given up on).
 *
 * <p>It holds the lease's {@code io} lock around every store operation and its {@code stateLock}
 * (which guards its one field) only between them.
 */
final class LeaseRelease {
    private static final long FIRST_RELEASE_RETRY_NANOS = TimeUnit.MILLISECONDS.toNanos(100);

    private final ManagedLease lease;
    /** A background retry of a failed release is scheduled (at most one chain of them). */
    private boolean releaseRetrying;

    LeaseRelease(ManagedLease lease) {
        this.lease = lease;
    }

    /** {@link ManagedLease#release()}. */
    void release() {
        boolean ended = false;
        lease.stateLock.lock();
        try {
            if (lease.state == State.RELEASED) return;
            if (lease.state == State.LOST) throw lease.lostCause;
            if (lease.state == State.HELD) {
                // From here on the lease is ours no more, whatever the store answers: invalid at once
                // and no new renewals, even while a renewal in flight keeps the store busy.
                lease.state = State.RELEASING;
                lease.timer.cancel();
                ended = true;
            }
        } finally {
            lease.stateLock.unlock();
        }
        if (ended) lease.runtime.leaseEnded();
        lease.io.lock();
        try {
            lease.stateLock.lock();
            try {
                if (lease.state == State.RELEASED) return;
                if (lease.state == State.LOST) throw lease.lostCause; // the renewal in flight found it lost
            } finally {
                lease.stateLock.unlock();
            }
            try {
                lease.releaseInStore();
            } catch (LeaseLostException e) {
                lease.lose(e);
                lease.afterRelease();
                throw e;
            } catch (RuntimeException e) {
                boolean schedule;
                lease.stateLock.lock();
                try {
                    schedule = !releaseRetrying;
                    releaseRetrying = true;
                } finally {
                    lease.stateLock.unlock();
                }
                if (schedule) {
                    lease.events.released(lease.key, lease.events.since(lease.grantedNanos), false);
                    retryReleaseLater(FIRST_RELEASE_RETRY_NANOS);
                }
                throw new LockBackendException("could not release the lease on '" + lease.key + "': " + e.getMessage()
                        + " — it is no longer renewed, so the lock frees by its TTL at the latest; the release is"
                        + " retried in the background until then",
                        !(e instanceof LockBackendException b) || b.isRetriable(), e);
            }
            boolean reported;
            lease.stateLock.lock();
            try {
                lease.state = State.RELEASED;
                reported = releaseRetrying; // an unconfirmed release was reported already
            } finally {
                lease.stateLock.unlock();
            }
            if (!reported) lease.events.released(lease.key, lease.events.since(lease.grantedNanos), true);
            lease.afterRelease();
        } finally {
            lease.io.unlock();
        }
    }

    /**
     * From {@link ManagedLease#start()}: the lease was invalid on arrival and is never handed out.
     * One try to release it in the store (if that fails, it ends at its TTL); it ends released.
     */
    void giveBack() {
        try {
            lease.releaseInStore();
        } catch (RuntimeException e) {
            LOG.log(Level.DEBUG, "releasing the late lease on '" + lease.key + "' failed; it ends at its TTL", e);
        }
        endReleased();
    }

    /** The lease has ended by release (given back, confirmed late, or given up on): say so, then the backend's hook. */
    private void endReleased() {
        lease.stateLock.lock();
        try {
            lease.state = State.RELEASED;
        } finally {
            lease.stateLock.unlock();
        }
        lease.afterRelease();
    }

    /** After a failed release: try again, backing off, until the store's expiry of this lease has passed. */
    private void retryReleaseLater(long delayNanos) {
        lease.runtime.later(Duration.ofNanos(delayNanos), () -> {
            lease.io.lock();
            try {
                lease.stateLock.lock();
                try {
                    if (lease.state != State.RELEASING) return; // the caller's own retry got there first
                } finally {
                    lease.stateLock.unlock();
                }
                boolean done = true;
                try {
                    lease.releaseInStore();
                } catch (LeaseLostException e) {
                    // someone broke or took the key meanwhile: nothing of ours is left to release
                } catch (RuntimeException e) {
                    done = lease.time.nanoTime() + delayNanos * 4 - (lease.validUntilNanos + lease.marginNanos) > 0;
                    if (!done) {
                        retryReleaseLater(delayNanos * 4);
                        return;
                    }
                    LOG.log(Level.DEBUG, "gave up releasing the lease on '" + lease.key + "'; it ends at its TTL", e);
                }
                endReleased();
            } finally {
                lease.io.unlock();
            }
        });
    }
}
