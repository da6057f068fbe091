package dev.latchkey.spi;

import dev.latchkey.Lease;
import dev.latchkey.LeaseLostException;
import dev.latchkey.LeaseOptions;
import dev.latchkey.LockBackendException;
import dev.latchkey.LockInfo;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * The part of a {@link Lease} every backend shares: local validity, heartbeat, loss listeners.
 * A backend supplies the two store operations, {@link #renewInStore} and {@link #releaseInStore}.
 *
 * <p><b>Guarantee.</b> The lease is valid until {@code start + ttl - margin} on the monotonic
 * clock, where {@code start} is when the last successful acquire or renew request was <em>sent</em>
 * (so the store's own expiry comes later) and {@code margin} is TTL/5. If that deadline passes
 * without a successful renewal the lease turns invalid, the backend's {@link #onLost} hook runs and
 * the listeners fire — before the store can hand the lock to anyone else. One scheduled task per
 * lease on the shared {@link Heartbeats} scheduler drives both heartbeat and deadline.
 */
public abstract class ManagedLease implements Lease {
    private static final System.Logger LOG = System.getLogger(ManagedLease.class.getName());

    private enum State { HELD, RELEASED, LOST }

    private final String key;
    private final String leaseId;
    private final String owner;
    private final long fencingToken;
    private final Instant acquiredAt;
    private final LeaseOptions options;
    private final TimeSource time;
    private final long marginNanos;
    private final List<Consumer<? super LeaseLostException>> listeners = new CopyOnWriteArrayList<>();

    private final Object lock = new Object();
    private volatile State state = State.HELD;
    private volatile long validUntilNanos;
    private volatile Instant expiresAt;
    private long nextHeartbeatNanos;
    private LeaseLostException lostCause;

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
        schedule(nextTickNanos());
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
     * still holds the lock (a pinned connection, an OS file lock). Must not throw.
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

    protected final LeaseOptions options() {
        return options;
    }

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
        return state == State.HELD && time.nanoTime() - validUntilNanos < 0;
    }

    @Override
    public final void renew() {
        synchronized (lock) {
            ensureHeld("renew");
            if (time.nanoTime() - validUntilNanos >= 0) {
                throw lose(new LeaseLostException("lease on '" + key + "' expired before it was renewed"));
            }
            long sent = time.nanoTime();
            try {
                renewInStore(options.ttl());
            } catch (LeaseLostException e) {
                throw lose(e);
            }
            validUntilNanos = sent + options.ttl().toNanos() - marginNanos;
            expiresAt = time.now().plus(options.ttl());
            nextHeartbeatNanos = sent + options.heartbeat().toNanos();
        }
    }

    @Override
    public final void release() {
        synchronized (lock) {
            if (state == State.RELEASED) return;
            if (state == State.LOST) throw lostCause;
            try {
                releaseInStore();
                state = State.RELEASED;
            } catch (LeaseLostException e) {
                throw lose(e);
            } finally {
                if (state != State.HELD) afterRelease();
            }
        }
    }

    @Override
    public final void close() {
        release();
    }

    @Override
    public final void onLost(Consumer<? super LeaseLostException> listener) {
        LeaseLostException cause;
        synchronized (lock) {
            if (state != State.LOST) {
                listeners.add(listener);
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

    /**
     * Marks the lease lost from outside the heartbeat (a backend that learns it early, e.g. its
     * session died). Idempotent.
     */
    protected final void markLost(LeaseLostException cause) {
        synchronized (lock) {
            if (state == State.HELD) lose(cause);
        }
    }

    private void ensureHeld(String what) {
        if (state == State.RELEASED) throw new IllegalStateException("cannot " + what + " lease on '" + key + "': already released");
        if (state == State.LOST) throw lostCause;
    }

    /** Under {@code lock}: records the loss and notifies; returns the cause to throw. */
    private LeaseLostException lose(LeaseLostException cause) {
        if (state != State.HELD) return lostCause != null ? lostCause : cause;
        state = State.LOST;
        lostCause = cause;
        try {
            onLost(cause);
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "cleanup after losing lease on '" + key + "' failed", e);
        }
        for (Consumer<? super LeaseLostException> l : listeners) {
            try {
                l.accept(cause);
            } catch (RuntimeException e) {
                LOG.log(Level.WARNING, "lease-lost listener for '" + key + "' threw", e);
            }
        }
        listeners.clear();
        return cause;
    }

    private long nextTickNanos() {
        return options.heartbeatEnabled() ? Math.min(nextHeartbeatNanos, validUntilNanos) : validUntilNanos;
    }

    private void schedule(long atNanos) {
        long delay = Math.max(0, atNanos - time.nanoTime());
        try {
            Heartbeats.scheduler().schedule(this::tick, delay, TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException e) {
            LOG.log(Level.WARNING, "heartbeat scheduler rejected lease on '" + key + "'", e);
        }
    }

    /** One run of the heartbeat/deadline task; reschedules itself while the lease is held. */
    private void tick() {
        long next;
        synchronized (lock) {
            if (state != State.HELD) return;
            long now = time.nanoTime();
            if (now - validUntilNanos >= 0) {
                lose(new LeaseLostException("lease on '" + key + "' was not renewed in time (ttl "
                        + options.ttl().toMillis() + "ms); another holder may now take it"));
                return;
            }
            if (options.heartbeatEnabled() && now - nextHeartbeatNanos >= 0) {
                try {
                    renew();
                } catch (LeaseLostException e) {
                    return; // renew() already recorded the loss and notified
                } catch (RuntimeException e) {
                    long remaining = validUntilNanos - time.nanoTime();
                    long retry = Math.max(TimeUnit.MILLISECONDS.toNanos(10),
                            Math.min(options.heartbeat().toNanos(), remaining / 3));
                    nextHeartbeatNanos = time.nanoTime() + retry;
                    LOG.log(Level.DEBUG, "heartbeat for '" + key + "' failed, retrying", e);
                }
            }
            next = nextTickNanos();
        }
        schedule(next);
    }
}
