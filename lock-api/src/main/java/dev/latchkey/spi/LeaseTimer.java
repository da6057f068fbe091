package dev.latchkey.spi;

import static dev.latchkey.spi.ManagedLease.LOG;

import dev.latchkey.LeaseLostException;
import java.lang.System.Logger.Level;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * The heartbeat and the deadline of one {@link ManagedLease}, on the manager's timer
 * ({@link LeaseRuntime#scheduler()}).
 *
 * <p><b>Guarantee.</b> A held lease has one pending tick (none once it has ended, or if the timer
 * rejects it, which is logged): at its next heartbeat or its deadline, whichever comes first, and
 * at the deadline alone while a heartbeat is in flight or heartbeats are off. A tick never blocks
 * and does no I/O, so a renewal that hangs delays nothing but itself: at the deadline the tick
 * turns the lease lost ({@link ManagedLease#lose}) whatever is in flight. A due heartbeat is handed
 * to the manager's renewers ({@link LeaseRuntime#execute}), one at a time per lease; after one that
 * failed without losing the lease, the next comes sooner — a third of the time left, at least
 * 10 ms, at most one heartbeat — so a store that recovers before the deadline keeps the lease.
 *
 * <p>Its fields are guarded by the lease's {@code stateLock}; the methods not marked "under
 * {@code stateLock}" take it themselves.
 */
final class LeaseTimer {
    private static final long MIN_RETRY_NANOS = TimeUnit.MILLISECONDS.toNanos(10);

    private final ManagedLease lease;
    private long nextHeartbeatNanos;
    /** A heartbeat's renewal is queued or waiting for the store. */
    private boolean renewing;
    private ScheduledFuture<?> tick;

    LeaseTimer(ManagedLease lease, long firstHeartbeatNanos) {
        this.lease = lease;
        this.nextHeartbeatNanos = firstHeartbeatNanos;
    }

    /** Under {@code stateLock}: a heartbeat's renewal is queued or waiting for the store. */
    boolean heartbeatInFlight() {
        return renewing;
    }

    /**
     * Under {@code stateLock}: a renewal landed whose write was sent at {@code landedNanos}; the next
     * heartbeat is one heartbeat after that send.
     */
    void renewed(long landedNanos) {
        // an earlier write confirmed late leaves little time: the next heartbeat comes soon
        nextHeartbeatNanos = landedNanos + lease.options.heartbeat().toNanos();
        reschedule();
    }

    /** Under {@code stateLock}: the lease has ended, its pending tick is dropped. */
    void cancel() {
        if (tick != null) tick.cancel(false);
    }

    /** Under {@code stateLock}: one pending tick, at the next heartbeat or the deadline. */
    void reschedule() {
        if (lease.state != ManagedLease.State.HELD) return;
        if (tick != null) tick.cancel(false);
        long at = lease.options.heartbeatEnabled() && !renewing
                ? Math.min(nextHeartbeatNanos, lease.validUntilNanos) : lease.validUntilNanos;
        try {
            tick = lease.runtime.scheduler().schedule(this::tick, Math.max(0, at - lease.time.nanoTime()), TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException e) {
            LOG.log(Level.WARNING, "heartbeat timer rejected lease on '" + lease.key + "'", e);
        }
    }

    /** On the timer: enforce the deadline, hand a due renewal to the renewer. Never blocks. */
    private void tick() {
        LeaseLostException expired;
        lease.stateLock.lock();
        try {
            if (lease.state != ManagedLease.State.HELD) return;
            long now = lease.time.nanoTime();
            if (now - lease.validUntilNanos < 0) {
                if (lease.options.heartbeatEnabled() && !renewing && now - nextHeartbeatNanos >= 0) {
                    renewing = true;
                    try {
                        lease.runtime.execute(this::heartbeat);
                    } catch (RejectedExecutionException e) {
                        renewing = false;
                        LOG.log(Level.WARNING, "renewer rejected lease on '" + lease.key + "'", e);
                    }
                }
                reschedule();
                return;
            }
            expired = lease.deadlinePassed();
        } finally {
            lease.stateLock.unlock();
        }
        lease.lose(expired);
    }

    /** On the renewer: one renewal; on a store error, retry sooner while time is left. */
    private void heartbeat() {
        try {
            lease.renew();
        } catch (LeaseLostException | IllegalStateException e) {
            // lost (already recorded and signalled) or released meanwhile
        } catch (RuntimeException e) {
            LOG.log(Level.DEBUG, "heartbeat for '" + lease.key + "' failed, retrying", e);
            lease.stateLock.lock();
            try {
                long remaining = lease.validUntilNanos - lease.time.nanoTime();
                nextHeartbeatNanos = lease.time.nanoTime()
                        + Math.max(MIN_RETRY_NANOS, Math.min(lease.options.heartbeat().toNanos(), remaining / 3));
            } finally {
                lease.stateLock.unlock();
            }
        } finally {
            lease.stateLock.lock();
            try {
                renewing = false;
                reschedule();
            } finally {
                lease.stateLock.unlock();
            }
        }
    }
}
