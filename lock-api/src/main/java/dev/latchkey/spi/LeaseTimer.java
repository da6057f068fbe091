package dev.latchkey.spi;

import static dev.latchkey.spi.ManagedLease.LOG;

import dev.latchkey.LeaseLostException;
import dev.latchkey.LockBackendException;
import java.lang.System.Logger.Level;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * The heartbeat and the deadline of one {@link ManagedLease}, on the manager's timer
 * ({@link LeaseRuntime#scheduler()}).
 *
 * <p><b>Guarantee.</b> A held lease has one pending tick (none once it has ended, or if the timer
 * rejects it, which is logged): at its next heartbeat or its deadline, whichever comes first, and
 * at the deadline alone while a heartbeat is in flight or heartbeats are off. A tick never blocks,
 * does no I/O, starts no thread and never throws, so nothing — a renewal that hangs, a renewer
 * thread that cannot be started, an Error thrown by a renewal — keeps the deadline from firing: at
 * the deadline the tick turns the lease lost ({@link ManagedLease#lose}) whatever is in flight. A
 * due heartbeat is handed to the manager's renewers ({@link LeaseRuntime#execute}), one at a time
 * per lease; after one that failed without losing the lease — the store's error, an Error, or no
 * renewer thread to run it (a failed renewal too: {@link ManagedLease#renewalFailed}) — the next
 * comes sooner: a third of the time left, at least 10 ms, at most one heartbeat, so a store or a
 * thread limit that recovers before the deadline keeps the lease.
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
    /** Why the last heartbeat found no renewer thread to run on; null once one was handed over. */
    private LockBackendException noRenewer;
    private ScheduledFuture<?> tick;

    LeaseTimer(ManagedLease lease, long firstHeartbeatNanos) {
        this.lease = lease;
        this.nextHeartbeatNanos = firstHeartbeatNanos;
    }

    /** Under {@code stateLock}: a heartbeat's renewal is queued or waiting for the store. */
    boolean heartbeatInFlight() {
        return renewing;
    }

    /** Under {@code stateLock}: why the last due heartbeat could not start a renewer thread; null if it could. */
    LockBackendException renewerMissing() {
        return noRenewer;
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
        } catch (RuntimeException | Error e) { // rejected, or an application's timer that failed otherwise
            LOG.log(Level.WARNING, "heartbeat timer rejected lease on '" + lease.key + "'", e);
        }
    }

    /** On the timer: enforce the deadline, hand a due renewal to the renewer. Never blocks, never throws. */
    private void tick() {
        LeaseLostException expired;
        LockBackendException handOffFailed = null;
        lease.stateLock.lock();
        try {
            if (lease.state != ManagedLease.State.HELD) return;
            long now = lease.time.nanoTime();
            if (now - lease.validUntilNanos < 0) {
                if (lease.options.heartbeatEnabled() && !renewing && now - nextHeartbeatNanos >= 0) {
                    renewing = true;
                    try {
                        lease.runtime.execute(this::heartbeat);
                        noRenewer = null;
                    } catch (LockBackendException e) { // no renewer thread could be started (logged by the runtime)
                        renewing = false;
                        noRenewer = e;
                        handOffFailed = e;
                        retrySoon();
                    }
                }
                reschedule();
                expired = null;
            } else {
                expired = lease.deadlinePassed();
            }
        } finally {
            lease.stateLock.unlock();
        }
        // reported outside stateLock, like every event
        if (handOffFailed != null) lease.renewalFailed(handOffFailed);
        if (expired != null) lease.lose(expired);
    }

    /** On the renewer: one renewal; on any failure, retry sooner while time is left. Never throws. */
    private void heartbeat() {
        try {
            lease.renew();
        } catch (LeaseLostException | IllegalStateException e) {
            // lost (already recorded and signalled) or released meanwhile
        } catch (RuntimeException | Error e) { // an Error too: the renewer thread must not end with it
            LOG.log(Level.DEBUG, "heartbeat for '" + lease.key + "' failed, retrying", e);
            lease.stateLock.lock();
            try {
                retrySoon();
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

    /** Under {@code stateLock}: after a failed renewal or hand-off, the next try comes sooner while time is left. */
    private void retrySoon() {
        long now = lease.time.nanoTime();
        long remaining = lease.validUntilNanos - now;
        nextHeartbeatNanos = now + Math.max(MIN_RETRY_NANOS, Math.min(lease.options.heartbeat().toNanos(), remaining / 3));
    }
}
