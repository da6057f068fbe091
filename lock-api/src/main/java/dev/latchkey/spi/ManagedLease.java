package dev.latchkey.spi;

import dev.latchkey.Lease;
import dev.latchkey.LeaseLostException;
import dev.latchkey.LeaseOptions;
import dev.latchkey.LockBackendException;
import dev.latchkey.LockInfo;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * The part of a {@link Lease} every backend shares: local validity, heartbeat, loss listeners.
 * A backend supplies the two store operations, {@link #renewInStore} and {@link #releaseInStore}.
 *
 * <p><b>Guarantee.</b> The lease is valid until {@code start + ttl - margin} on the monotonic
 * clock, where {@code start} is when the last successful acquire or renew request was <em>sent</em>
 * (so the store's own expiry comes later) and {@code margin} is TTL/5. When that deadline passes
 * without a successful renewal the lease turns invalid, the backend's {@link #onLost} hook runs and
 * the listeners fire — before the store can hand the lock to anyone else. The deadline is enforced
 * by the {@link Heartbeats} timer, which never waits for a renewal in flight: a store that hangs
 * delays nothing but its own renewals.
 *
 * <p>Store operations of one lease (renew, release) are serialised; state changes are atomic, so
 * a renewal that completes after the deadline fired cannot bring the lease back.
 */
public abstract class ManagedLease implements Lease {
    private static final System.Logger LOG = System.getLogger(ManagedLease.class.getName());
    private static final long MIN_RETRY_NANOS = TimeUnit.MILLISECONDS.toNanos(10);

    private enum State { HELD, RELEASED, LOST }

    private final String key;
    private final String leaseId;
    private final String owner;
    private final long fencingToken;
    private final Instant acquiredAt;
    private final LeaseOptions options;
    private final TimeSource time;
    private final long marginNanos;

    /** Serialises store operations (renew, release) of this lease; held during I/O. */
    private final Object io = new Object();
    /** Guards the fields below; never held during I/O. */
    private final Object stateLock = new Object();
    private State state = State.HELD;
    private LeaseLostException lostCause;
    private final List<Consumer<? super LeaseLostException>> listeners = new ArrayList<>();
    private volatile long validUntilNanos;
    private volatile Instant expiresAt;
    private long nextHeartbeatNanos;
    private boolean renewing;
    private ScheduledFuture<?> tick;

    /**
     * @param requestSentNanos {@link TimeSource#nanoTime()} just before the winning acquire request was sent
     */
    protected ManagedLease(String key, String leaseId, long fencingToken, LeaseOptions options,
                           TimeSource time, long requestSentNanos) {
        this.key = key;
        this.leaseId = leaseId;
        this.owner = options.owner();
        this.fencingToken = fencingToken;
        this.options = options;
        this.time = time;
        this.acquiredAt = time.now();
        this.marginNanos = options.ttl().toNanos() / 5;
        this.validUntilNanos = requestSentNanos + options.ttl().toNanos() - marginNanos;
        this.expiresAt = acquiredAt.plus(options.ttl());
        this.nextHeartbeatNanos = requestSentNanos + options.heartbeat().toNanos();
    }

    /**
     * Starts the heartbeat and deadline task. Call once, after the lease is fully built (a
     * subclass constructor must not leak {@code this} to another thread).
     */
    protected final void start() {
        synchronized (stateLock) {
            reschedule();
        }
    }

    /**
     * Extends the lease in the store by {@code ttl}.
     *
     * @throws LeaseLostException   the store says this lease is no longer the holder
     * @throws LockBackendException the store could not answer (the lease stays valid until its deadline)
     */
    protected abstract void renewInStore(Duration ttl);

    /**
     * Removes this lease's hold in the store.
     *
     * @throws LeaseLostException the store says this lease was no longer the holder
     */
    protected abstract void releaseInStore();

    /**
     * Called once when the lease is lost, before the listeners: let go of whatever local resource
     * still holds the lock (a pinned connection, an OS file lock) — after {@link #safetyMargin()} if
     * letting go would let others in at once. May run on the timer thread: must not block (hand I/O
     * to {@link Heartbeats#later}) and must not throw.
     */
    protected void onLost(LeaseLostException cause) {}

    /** Called once after a successful release (or after a release that found the lease lost). */
    protected void afterRelease() {}

    @Override public final String key() { return key; }
    @Override public final String leaseId() { return leaseId; }
    @Override public final String owner() { return owner; }
    @Override public final long fencingToken() { return fencingToken; }
    @Override public final Instant acquiredAt() { return acquiredAt; }
    @Override public final Instant expiresAt() { return expiresAt; }
    @Override public final Duration ttl() { return options.ttl(); }

    /**
     * How long before the store's expiry this lease turns invalid locally (TTL/5). A backend that
     * releases a local hold on loss (an OS lock) waits this long first, so no one gets in before
     * the TTL has really passed.
     */
    protected final Duration safetyMargin() {
        return Duration.ofNanos(marginNanos);
    }

    @Override
    public final boolean isValid() {
        synchronized (stateLock) {
            return state == State.HELD && time.nanoTime() - validUntilNanos < 0;
        }
    }

    @Override
    public final void renew() {
        synchronized (io) {
            synchronized (stateLock) {
                if (state == State.RELEASED) throw new IllegalStateException("lease on '" + key + "' was already released");
                if (state == State.LOST) throw lostCause;
                if (time.nanoTime() - validUntilNanos >= 0) {
                    throw loseLocked(new LeaseLostException("lease on '" + key + "' expired before it was renewed"));
                }
            }
            long sent = time.nanoTime();
            try {
                renewInStore(options.ttl());
            } catch (LeaseLostException e) {
                throw lose(e);
            }
            synchronized (stateLock) {
                if (state == State.LOST) throw lostCause; // the deadline fired while we were renewing
                validUntilNanos = sent + options.ttl().toNanos() - marginNanos;
                expiresAt = time.now().plus(options.ttl());
                nextHeartbeatNanos = sent + options.heartbeat().toNanos();
                reschedule();
            }
        }
    }

    @Override
    public final void release() {
        synchronized (io) {
            synchronized (stateLock) {
                if (state == State.RELEASED) return;
                if (state == State.LOST) throw lostCause;
            }
            try {
                releaseInStore();
            } catch (LeaseLostException e) {
                lose(e);
                afterRelease();
                throw e;
            }
            synchronized (stateLock) {
                // The store accepted our release, so we held the lock until now even if the
                // local deadline fired meanwhile (a conservative false alarm).
                state = State.RELEASED;
                if (tick != null) tick.cancel(false);
            }
            afterRelease();
        }
    }

    @Override
    public final void close() {
        release();
    }

    @Override
    public final void onLost(Consumer<? super LeaseLostException> listener) {
        LeaseLostException cause;
        synchronized (stateLock) {
            if (state != State.LOST) {
                if (state == State.HELD) listeners.add(listener);
                return;
            }
            cause = lostCause;
        }
        listener.accept(cause);
    }

    @Override
    public LockInfo info() {
        return new LockInfo(key, owner, leaseId, fencingToken, acquiredAt, expiresAt, options.metadata());
    }

    /** Records the loss once, then runs the hook and the listeners; returns the cause to throw. */
    private LeaseLostException lose(LeaseLostException cause) {
        List<Consumer<? super LeaseLostException>> toCall;
        synchronized (stateLock) {
            if (state != State.HELD) return lostCause != null ? lostCause : cause;
            state = State.LOST;
            lostCause = cause;
            if (tick != null) tick.cancel(false);
            toCall = List.copyOf(listeners);
            listeners.clear();
        }
        try {
            onLost(cause);
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "cleanup after losing lease on '" + key + "' failed", e);
        }
        for (Consumer<? super LeaseLostException> l : toCall) {
            try {
                l.accept(cause);
            } catch (RuntimeException e) {
                LOG.log(Level.WARNING, "lease-lost listener for '" + key + "' threw", e);
            }
        }
        return cause;
    }

    /** {@link #lose} for callers holding {@code stateLock}: hook and listeners run on the timer. */
    private LeaseLostException loseLocked(LeaseLostException cause) {
        Heartbeats.scheduler().execute(() -> lose(cause));
        return cause;
    }

    /** Under {@code stateLock}: one pending tick, at the next heartbeat or the deadline. */
    private void reschedule() {
        if (state != State.HELD) return;
        if (tick != null) tick.cancel(false);
        long at = options.heartbeatEnabled() && !renewing ? Math.min(nextHeartbeatNanos, validUntilNanos) : validUntilNanos;
        try {
            tick = Heartbeats.scheduler().schedule(this::tick, Math.max(0, at - time.nanoTime()), TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException e) {
            LOG.log(Level.WARNING, "heartbeat timer rejected lease on '" + key + "'", e);
        }
    }

    /** On the timer: enforce the deadline, hand a due renewal to the renewer. Never blocks. */
    private void tick() {
        synchronized (stateLock) {
            if (state != State.HELD) return;
            long now = time.nanoTime();
            if (now - validUntilNanos < 0) {
                if (options.heartbeatEnabled() && !renewing && now - nextHeartbeatNanos >= 0) {
                    renewing = true;
                    Heartbeats.renewals().execute(this::heartbeat);
                }
                reschedule();
                return;
            }
        }
        lose(new LeaseLostException("lease on '" + key + "' was not renewed in time (ttl "
                + options.ttl().toMillis() + "ms); another holder may now take it"));
    }

    /** On the renewer: one renewal; on a store error, retry sooner while time is left. */
    private void heartbeat() {
        try {
            renew();
        } catch (LeaseLostException | IllegalStateException e) {
            // lost (already recorded and signalled) or released meanwhile
        } catch (RuntimeException e) {
            LOG.log(Level.DEBUG, "heartbeat for '" + key + "' failed, retrying", e);
            synchronized (stateLock) {
                long remaining = validUntilNanos - time.nanoTime();
                nextHeartbeatNanos = time.nanoTime() + Math.max(MIN_RETRY_NANOS, Math.min(options.heartbeat().toNanos(), remaining / 3));
            }
        } finally {
            synchronized (stateLock) {
                renewing = false;
                reschedule();
            }
        }
    }
}
