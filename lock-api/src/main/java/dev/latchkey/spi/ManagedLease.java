package dev.latchkey.spi;

import dev.latchkey.Lease;
import dev.latchkey.LeaseLostException;
import dev.latchkey.LeaseLostException.Reason;
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
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;

/**
 * The part of a {@link Lease} every backend shares: local validity, heartbeat, loss listeners,
 * release. A backend supplies the two store operations, {@link #renewInStore} and
 * {@link #releaseInStore}.
 *
 * <p><b>Guarantee.</b> The lease is valid until {@code start + ttl - margin} on the monotonic
 * clock, where {@code start} is when the last store write <em>known to have landed</em> was
 * <em>sent</em> (the acquisition, or the renewal {@link #renewInStore} reports), so the store's own
 * expiry, which counts from when that write arrived, comes later; {@code margin} is TTL/5. A renewal
 * whose outcome is unknown extends nothing. When the deadline passes without a confirmed renewal the
 * lease turns invalid, the backend's {@link #onLost} hook runs and the listeners fire — at least a
 * margin before the store can hand the lock to anyone else. The deadline is enforced by the
 * manager's timer ({@link LeaseRuntime#scheduler()}), which never waits for a renewal in flight: a store that hangs delays
 * nothing but its own renewals.
 *
 * <ul>
 *   <li>{@link #start()} refuses a lease whose acquisition took so long that it is invalid on
 *       arrival: it is released again and never handed out.</li>
 *   <li>A release the store does not confirm ends the lease locally all the same: renewals stop at
 *       once, so the store frees the key within the TTL at the latest, and the release is retried in
 *       the background until then.</li>
 * </ul>
 *
 * <p>Store operations of one lease (renew, release) are serialised; state changes are atomic, so
 * a renewal that completes after the deadline fired cannot bring the lease back.
 *
 * <p><b>Events.</b> The lease reports its grant, renewals, failed renewals, loss and release to the
 * manager's {@link LockEvents}, which only queues them: a listener never runs on the lease's
 * threads or under its locks. A loss by deadline is {@link Reason#STORE_UNREACHABLE} when a
 * renewal failed since the last one that landed or a heartbeat's was still waiting for the store,
 * else {@link Reason#EXPIRED}.
 *
 * <p><b>Model.</b> Validity, renewal, release, its background retry and the refusal of a lease
 * invalid on arrival are part of the spin model {@code model/lease-engine.pml} (with the lease
 * engine's store operations), checked by {@code scripts/model-check.sh}; {@code docs/model-checking.md}
 * says what it proves and for which bounds. A change to these rules belongs in the model too.
 */
public abstract class ManagedLease implements Lease {
    private static final System.Logger LOG = System.getLogger(ManagedLease.class.getName());
    private static final long MIN_RETRY_NANOS = TimeUnit.MILLISECONDS.toNanos(10);
    private static final long FIRST_RELEASE_RETRY_NANOS = TimeUnit.MILLISECONDS.toNanos(100);

    /** RELEASING: the caller released, the store did not confirm it; not valid, not renewed. */
    private enum State { HELD, RELEASING, RELEASED, LOST }

    private final LeaseRuntime runtime;
    private final String key;
    private final String leaseId;
    private final String owner;
    private final long fencingToken;
    private final Instant acquiredAt;
    private final LeaseOptions options;
    private final TimeSource time;
    private final LockEvents events;
    private final long marginNanos;
    private final long requestSentNanos;
    /** When the lease was granted, for the hold time of events. */
    private final long grantedNanos;

    /**
     * Serialises store operations (renew, release) of this lease; held during I/O, so a lock rather
     * than a monitor: a virtual thread waiting for the store under it does not pin its carrier.
     */
    private final ReentrantLock io = new ReentrantLock();
    /** Guards the fields below; never held during I/O. */
    private final ReentrantLock stateLock = new ReentrantLock();
    private State state = State.HELD;
    private LeaseLostException lostCause;
    private final List<Consumer<? super LeaseLostException>> listeners = new ArrayList<>();
    private volatile long validUntilNanos;
    private volatile Instant expiresAt;
    private long nextHeartbeatNanos;
    private boolean renewing;
    /** A renewal failed (store error, no answer) since the last one that landed. */
    private boolean renewalFailing;
    /** A background retry of a failed release is scheduled (at most one chain of them). */
    private boolean releaseRetrying;
    private ScheduledFuture<?> tick;

    /**
     * @param requestSentNanos {@link TimeSource#nanoTime()} just before the winning acquire request was sent
     */
    protected ManagedLease(LeaseRuntime runtime, String key, String leaseId, long fencingToken, LeaseOptions options,
                           long requestSentNanos) {
        this.runtime = runtime;
        this.key = key;
        this.leaseId = leaseId;
        this.owner = options.owner();
        this.fencingToken = fencingToken;
        this.options = options;
        this.time = runtime.time();
        this.events = runtime.events();
        this.requestSentNanos = requestSentNanos;
        this.grantedNanos = time.nanoTime();
        this.acquiredAt = time.now();
        this.marginNanos = safetyMargin(options.ttl()).toNanos();
        this.validUntilNanos = requestSentNanos + options.ttl().toNanos() - marginNanos;
        this.expiresAt = acquiredAt.plus(options.ttl());
        this.nextHeartbeatNanos = requestSentNanos + options.heartbeat().toNanos();
    }

    /**
     * Starts the heartbeat and deadline task. Call once, after the lease is fully built (a
     * subclass constructor must not leak {@code this} to another thread).
     *
     * @throws LockBackendException (retriable) if the acquisition took longer than TTL − margin, so
     *         that the lease would be invalid on arrival; it has been released again
     */
    protected final void start() {
        long late = time.nanoTime() - validUntilNanos;
        if (late >= 0) {
            try {
                releaseInStore();
            } catch (RuntimeException e) {
                LOG.log(Level.DEBUG, "releasing the late lease on '" + key + "' failed; it ends at its TTL", e);
            }
            stateLock.lock();
            try {
                state = State.RELEASED;
            } finally {
                stateLock.unlock();
            }
            afterRelease();
            throw new LockBackendException("the store took longer than the lease's validity window ("
                    + TimeUnit.NANOSECONDS.toMillis(options.ttl().toNanos() - marginNanos) + " ms of a "
                    + options.ttl().toMillis() + " ms TTL) to grant the lock on '" + key
                    + "', so the lease would have been invalid on arrival; it was given back. Use a longer TTL"
                    + " or a faster store", true);
        }
        events.acquired(key, events.since(requestSentNanos));
        stateLock.lock();
        try {
            reschedule();
        } finally {
            stateLock.unlock();
        }
    }

    /**
     * Extends the lease in the store by {@code ttl}.
     *
     * @param sentNanos {@link TimeSource#nanoTime()} taken just before this call
     * @return the {@link TimeSource#nanoTime()} at which the write the store now holds for this
     *         lease was sent: {@code sentNanos} when this renewal landed, an earlier time when the
     *         store turned out to hold an earlier renewal whose reply was lost. Validity counts from
     *         it. Throw instead of answering when it is unknown whether anything landed.
     * @throws LeaseLostException   the store says this lease is no longer the holder
     * @throws LockBackendException the store could not answer, or the outcome is unknown (the lease
     *                              stays valid until its deadline)
     */
    protected abstract long renewInStore(Duration ttl, long sentNanos);

    /**
     * Removes this lease's hold in the store. May be called again after it threw a
     * {@link LockBackendException} (the release is retried in the background).
     *
     * @throws LeaseLostException the store says this lease was no longer the holder
     */
    protected abstract void releaseInStore();

    /**
     * Called once when the lease is lost, before the listeners: let go of whatever local resource
     * still holds the lock (a pinned connection, an OS file lock) — after {@link #safetyMargin()} if
     * letting go would let others in at once. May run on the timer thread: must not block (hand I/O
     * to {@link #runtime()}{@code .later}) and must not throw.
     */
    protected void onLost(LeaseLostException cause) {}

    /** Called once when the lease has ended by release (confirmed, found lost, or given up on). */
    protected void afterRelease() {}

    /** The runtime of the manager this lease belongs to (its renewers and clocks). */
    protected final LeaseRuntime runtime() {
        return runtime;
    }

    @Override public final String key() { return key; }
    @Override public final String leaseId() { return leaseId; }
    @Override public final String owner() { return owner; }
    @Override public final long fencingToken() { return fencingToken; }
    @Override public final Instant acquiredAt() { return acquiredAt; }
    @Override public final Instant expiresAt() { return expiresAt; }
    @Override public final Duration ttl() { return options.ttl(); }

    /**
     * The safety margin of a lease with this TTL: TTL/5. A caller that must stop work before anyone
     * else can get the lock (such as {@code latchkey run}, which kills its command) has this long
     * from the loss of an expired lease.
     */
    public static Duration safetyMargin(Duration ttl) {
        return ttl.dividedBy(5);
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
        stateLock.lock();
        try {
            return state == State.HELD && time.nanoTime() - validUntilNanos < 0;
        } finally {
            stateLock.unlock();
        }
    }

    @Override
    public final void renew() {
        io.lock();
        try {
            LeaseLostException expired = null;
            stateLock.lock();
            try {
                if (state == State.RELEASED || state == State.RELEASING) {
                    throw new IllegalStateException("lease on '" + key + "' was already released");
                }
                if (state == State.LOST) throw lostCause;
                if (time.nanoTime() - validUntilNanos >= 0) expired = deadlinePassed();
            } finally {
                stateLock.unlock();
            }
            if (expired != null) throw lose(expired); // outside stateLock: the hook and listeners run here
            long sent = time.nanoTime();
            long landed;
            try {
                landed = renewInStore(options.ttl(), sent);
            } catch (LeaseLostException e) {
                throw lose(e);
            } catch (RuntimeException e) {
                long left;
                stateLock.lock();
                try {
                    renewalFailing = true;
                    left = validUntilNanos - time.nanoTime();
                } finally {
                    stateLock.unlock();
                }
                events.renewalFailed(key, Duration.ofNanos(Math.max(0, left)), e);
                throw e;
            }
            long validFor;
            stateLock.lock();
            try {
                if (state == State.LOST) throw lostCause; // the deadline fired while we were renewing
                long until = landed + options.ttl().toNanos() - marginNanos;
                if (until - validUntilNanos > 0) {
                    validUntilNanos = until;
                    expiresAt = time.now().plusNanos(until + marginNanos - time.nanoTime());
                }
                renewalFailing = false;
                validFor = validUntilNanos - time.nanoTime();
                // an earlier write confirmed late leaves little time: the next heartbeat comes soon
                nextHeartbeatNanos = landed + options.heartbeat().toNanos();
                reschedule();
            } finally {
                stateLock.unlock();
            }
            events.renewed(key, Duration.ofNanos(Math.max(0, validFor)));
        } finally {
            io.unlock();
        }
    }

    @Override
    public final void release() {
        stateLock.lock();
        try {
            if (state == State.RELEASED) return;
            if (state == State.LOST) throw lostCause;
            if (state == State.HELD) {
                // From here on the lease is ours no more, whatever the store answers: invalid at once
                // and no new renewals, even while a renewal in flight keeps the store busy.
                state = State.RELEASING;
                if (tick != null) tick.cancel(false);
            }
        } finally {
            stateLock.unlock();
        }
        io.lock();
        try {
            stateLock.lock();
            try {
                if (state == State.RELEASED) return;
                if (state == State.LOST) throw lostCause; // the renewal in flight found it lost
            } finally {
                stateLock.unlock();
            }
            try {
                releaseInStore();
            } catch (LeaseLostException e) {
                lose(e);
                afterRelease();
                throw e;
            } catch (RuntimeException e) {
                boolean schedule;
                stateLock.lock();
                try {
                    schedule = !releaseRetrying;
                    releaseRetrying = true;
                } finally {
                    stateLock.unlock();
                }
                if (schedule) {
                    events.released(key, events.since(grantedNanos), false);
                    retryReleaseLater(FIRST_RELEASE_RETRY_NANOS);
                }
                throw new LockBackendException("could not release the lease on '" + key + "': " + e.getMessage()
                        + " — it is no longer renewed, so the lock frees by its TTL at the latest; the release is"
                        + " retried in the background until then",
                        !(e instanceof LockBackendException b) || b.isRetriable(), e);
            }
            boolean reported;
            stateLock.lock();
            try {
                state = State.RELEASED;
                reported = releaseRetrying; // an unconfirmed release was reported already
            } finally {
                stateLock.unlock();
            }
            if (!reported) events.released(key, events.since(grantedNanos), true);
            afterRelease();
        } finally {
            io.unlock();
        }
    }

    @Override
    public final void close() {
        release();
    }

    /** After a failed release: try again, backing off, until the store's expiry of this lease has passed. */
    private void retryReleaseLater(long delayNanos) {
        runtime.later(Duration.ofNanos(delayNanos), () -> {
            io.lock();
            try {
                stateLock.lock();
                try {
                    if (state != State.RELEASING) return; // the caller's own retry got there first
                } finally {
                    stateLock.unlock();
                }
                boolean done = true;
                try {
                    releaseInStore();
                } catch (LeaseLostException e) {
                    // someone broke or took the key meanwhile: nothing of ours is left to release
                } catch (RuntimeException e) {
                    done = time.nanoTime() + delayNanos * 4 - (validUntilNanos + marginNanos) > 0;
                    if (!done) {
                        retryReleaseLater(delayNanos * 4);
                        return;
                    }
                    LOG.log(Level.DEBUG, "gave up releasing the lease on '" + key + "'; it ends at its TTL", e);
                }
                stateLock.lock();
                try {
                    state = State.RELEASED;
                } finally {
                    stateLock.unlock();
                }
                afterRelease();
            } finally {
                io.unlock();
            }
        });
    }

    @Override
    public final void onLost(Consumer<? super LeaseLostException> listener) {
        LeaseLostException cause;
        stateLock.lock();
        try {
            if (state != State.LOST) {
                if (state == State.HELD) listeners.add(listener);
                return;
            }
            cause = lostCause;
        } finally {
            stateLock.unlock();
        }
        listener.accept(cause);
    }

    @Override
    public LockInfo info() {
        return new LockInfo(key, owner, leaseId, fencingToken, acquiredAt, expiresAt, options.metadata());
    }

    @Override
    public String toString() {
        String validity;
        stateLock.lock();
        try {
            long left = validUntilNanos - time.nanoTime();
            validity = state != State.HELD ? state.name().toLowerCase(java.util.Locale.ROOT)
                    : left > 0 ? "valid for " + TimeUnit.NANOSECONDS.toMillis(left) + " ms" : "expired";
        } finally {
            stateLock.unlock();
        }
        return getClass().getSimpleName() + "[key=" + key + ", leaseId=" + leaseId + ", token=" + fencingToken
                + ", owner=" + owner + ", ttl=" + options.ttl().toMillis() + "ms, " + validity + "]";
    }

    /** Records the loss once, then runs the hook and the listeners; returns the cause to throw. */
    private LeaseLostException lose(LeaseLostException cause) {
        List<Consumer<? super LeaseLostException>> toCall;
        stateLock.lock();
        try {
            // HELD, or RELEASING when a release finds the lease already lost
            if (state == State.LOST || state == State.RELEASED) return lostCause != null ? lostCause : cause;
            state = State.LOST;
            lostCause = cause;
            if (tick != null) tick.cancel(false);
            toCall = List.copyOf(listeners);
            listeners.clear();
        } finally {
            stateLock.unlock();
        }
        events.lost(key, events.since(grantedNanos), cause);
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

    /** Under {@code stateLock}: one pending tick, at the next heartbeat or the deadline. */
    private void reschedule() {
        if (state != State.HELD) return;
        if (tick != null) tick.cancel(false);
        long at = options.heartbeatEnabled() && !renewing ? Math.min(nextHeartbeatNanos, validUntilNanos) : validUntilNanos;
        try {
            tick = runtime.scheduler().schedule(this::tick, Math.max(0, at - time.nanoTime()), TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException e) {
            LOG.log(Level.WARNING, "heartbeat timer rejected lease on '" + key + "'", e);
        }
    }

    /** Under {@code stateLock}: the loss of a lease whose deadline passed without a renewal landing. */
    private LeaseLostException deadlinePassed() {
        String ttl = "ttl " + options.ttl().toMillis() + "ms";
        String next = "; another holder may take it once the TTL has passed";
        // a heartbeat still waiting for the store at the deadline counts as a failed one
        return renewalFailing || renewing
                ? new LeaseLostException(Reason.STORE_UNREACHABLE, "lease on '" + key + "' could not be renewed in time: the"
                        + " store failed or had not answered by the lease's deadline (" + ttl + ")" + next)
                : new LeaseLostException(Reason.EXPIRED, "lease on '" + key + "' was not renewed in time (" + ttl + ")" + next);
    }

    /** On the timer: enforce the deadline, hand a due renewal to the renewer. Never blocks. */
    private void tick() {
        LeaseLostException expired;
        stateLock.lock();
        try {
            if (state != State.HELD) return;
            long now = time.nanoTime();
            if (now - validUntilNanos < 0) {
                if (options.heartbeatEnabled() && !renewing && now - nextHeartbeatNanos >= 0) {
                    renewing = true;
                    try {
                        runtime.execute(this::heartbeat);
                    } catch (RejectedExecutionException e) {
                        renewing = false;
                        LOG.log(Level.WARNING, "renewer rejected lease on '" + key + "'", e);
                    }
                }
                reschedule();
                return;
            }
            expired = deadlinePassed();
        } finally {
            stateLock.unlock();
        }
        lose(expired);
    }

    /** On the renewer: one renewal; on a store error, retry sooner while time is left. */
    private void heartbeat() {
        try {
            renew();
        } catch (LeaseLostException | IllegalStateException e) {
            // lost (already recorded and signalled) or released meanwhile
        } catch (RuntimeException e) {
            LOG.log(Level.DEBUG, "heartbeat for '" + key + "' failed, retrying", e);
            stateLock.lock();
            try {
                long remaining = validUntilNanos - time.nanoTime();
                nextHeartbeatNanos = time.nanoTime() + Math.max(MIN_RETRY_NANOS, Math.min(options.heartbeat().toNanos(), remaining / 3));
            } finally {
                stateLock.unlock();
            }
        } finally {
            stateLock.lock();
            try {
                renewing = false;
                reschedule();
            } finally {
                stateLock.unlock();
            }
        }
    }
}
