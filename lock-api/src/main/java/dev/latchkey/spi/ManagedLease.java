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
 * lease turns invalid, the backend's {@link #afterLoss} hook runs and the listeners fire — at least a
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
 * threads or under its locks. A loss by deadline is {@link Reason#NO_RENEWER_THREAD} when the last
 * due heartbeat found no renewer thread and none could be started, {@link Reason#STORE_UNREACHABLE}
 * when a renewal failed since the last one that landed or a heartbeat's was still waiting for the
 * store, else {@link Reason#EXPIRED}.
 *
 * <p><b>Parts.</b> This class keeps the lease's state and validity, its renewal and its loss;
 * {@code LeaseTimer} runs its heartbeat and enforces its deadline, {@code LeaseRelease} ends it by
 * release (and gives back a lease invalid on arrival), both in this package.
 *
 * <p><b>Model.</b> Validity, renewal, release, its background retry and the refusal of a lease
 * invalid on arrival are part of the spin model {@code model/lease-engine.pml} (with the lease
 * engine's store operations), checked by {@code scripts/model-check.sh}; {@code docs/model-checking.md}
 * says what it proves and for which bounds. A change to these rules belongs in the model too.
 */
public abstract class ManagedLease implements Lease {
    /** The log of the lease and its parts, {@link LeaseTimer} and {@link LeaseRelease}. */
    static final System.Logger LOG = System.getLogger(ManagedLease.class.getName());

    /** RELEASING: the caller released, the store did not confirm it; not valid, not renewed. */
    enum State { HELD, RELEASING, RELEASED, LOST }

    // package-private: read by the lease's parts, LeaseTimer and LeaseRelease
    final LeaseRuntime runtime;
    final String key;
    private final String leaseId;
    private final String owner;
    private final long fencingToken;
    private final Instant acquiredAt;
    /** The lease's options, with the TTL of its last {@link #renew(Duration)}; written under {@code io} and {@code stateLock}. */
    volatile LeaseOptions options;
    final TimeSource time;
    final LockEvents events;
    /** TTL/5 of the current TTL; written with {@link #options}. */
    volatile long marginNanos;
    private final long requestSentNanos;
    /** When the lease was granted, for the hold time of events. */
    final long grantedNanos;

    /**
     * Serialises store operations (renew, release) of this lease; held during I/O, so a lock rather
     * than a monitor: a virtual thread waiting for the store under it does not pin its carrier.
     */
    final ReentrantLock io = new ReentrantLock();
    /** Guards the fields below and those of the lease's parts; never held during I/O. */
    final ReentrantLock stateLock = new ReentrantLock();
    State state = State.HELD;
    LeaseLostException lostCause;
    private final List<Consumer<? super LeaseLostException>> listeners = new ArrayList<>();
    volatile long validUntilNanos;
    private volatile Instant expiresAt;
    /** A renewal failed (store error, no answer) since the last one that landed. */
    private boolean renewalFailing;
    /**
     * Under {@code io}: the shortest TTL of the renewals sent since the last one known to have
     * landed (0: none). A backend may report an earlier write as the one that landed; it may carry
     * this TTL, so validity counts from that write with it.
     */
    private long unconfirmedTtlNanos;
    /**
     * Released by {@link #release(Duration)}: not valid, not renewed, and ended at its deadline, when
     * the store lets the key go (the backend's {@link #afterLoss} hook runs then, as on a loss).
     */
    private boolean kept;
    final LeaseTimer timer;
    private final LeaseRelease releaser;

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
        this.timer = new LeaseTimer(this, requestSentNanos + options.heartbeat().toNanos());
        this.releaser = new LeaseRelease(this);
    }

    /**
     * Starts the heartbeat and deadline task. Call once, after the lease is fully built (a
     * subclass constructor must not leak {@code this} to another thread).
     *
     * @throws LockBackendException (retriable) if the acquisition took longer than TTL − margin, so
     *         that the lease would be invalid on arrival, or if the timer thread that would enforce its
     *         deadline could not be started; it has been released again
     */
    protected final void start() {
        long late = time.nanoTime() - validUntilNanos;
        if (late >= 0) {
            releaser.giveBack();
            throw new LockBackendException("the store took longer than the lease's validity window ("
                    + TimeUnit.NANOSECONDS.toMillis(options.ttl().toNanos() - marginNanos) + " ms of a "
                    + options.ttl().toMillis() + " ms TTL) to grant the lock on '" + key
                    + "', so the lease would have been invalid on arrival; it was given back. Use a longer TTL"
                    + " or a faster store", true);
        }
        if (!runtime.timerRunning()) {
            releaser.giveBack();
            throw new LockBackendException("could not start the heartbeat timer thread that enforces the deadline of"
                    + " the lease on '" + key + "', so it was given back: the process or its container may be at its"
                    + " thread limit (ulimit -u, a cgroup's pids.max); try again", true);
        }
        runtime.leaseHeld(); // the threads the lease needs, before it is handed out
        events.acquired(key, events.since(requestSentNanos));
        stateLock.lock();
        try {
            timer.reschedule();
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
     * Called once when the lease is lost, or a {@linkplain #release(Duration) kept release} runs out,
     * before the {@link #onLost(Consumer) listeners}: let go of whatever local resource
     * still holds the lock (a pinned connection, an OS file lock) — after {@link #safetyMargin()} if
     * letting go would let others in at once. May run on the timer thread: must not block (hand I/O
     * to {@link #runtime()}{@code .later}) and must not throw.
     */
    protected void afterLoss(LeaseLostException cause) {}

    /**
     * Refuses, with an {@link IllegalArgumentException}, a TTL this backend cannot hold, before
     * {@link #renew(Duration)} changes anything. The TTL passed to {@link #renewInStore} is the one
     * the store must hold from then on; the default accepts any.
     */
    protected void checkTtl(Duration ttl) {}

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

    /** The current heartbeat interval, zero when off; it follows {@link #renew(Duration)}. */
    protected final Duration heartbeat() {
        return options.heartbeat();
    }

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
            return state == State.HELD && !kept && time.nanoTime() - validUntilNanos < 0;
        } finally {
            stateLock.unlock();
        }
    }

    @Override
    public final void renew() {
        renewWith(null);
    }

    /**
     * Renews with a new TTL: this write and every later one (the heartbeat's too) hold the key for
     * {@code ttl}; a heartbeat interval longer than a third of it becomes a third. A shorter TTL
     * shortens the local validity before the write is sent, so a write whose outcome is unknown
     * can never leave the store holding the key for less time than this lease counts on.
     *
     * @throws IllegalArgumentException the backend cannot hold a lease of {@code ttl} ({@link #checkTtl}); nothing changed
     */
    @Override
    public final void renew(Duration ttl) {
        renewWith(LeaseOptions.ttl(ttl).ttl()); // the same bounds as a TTL taken with
    }

    private void renewWith(Duration newTtl) {
        io.lock();
        try {
            LeaseLostException expired = null;
            stateLock.lock();
            try {
                if (kept || state == State.RELEASED || state == State.RELEASING) {
                    throw new IllegalStateException("lease on '" + key + "' was already released");
                }
                if (state == State.LOST) throw lostCause;
                if (time.nanoTime() - validUntilNanos >= 0) expired = deadlinePassed();
            } finally {
                stateLock.unlock();
            }
            if (expired != null) throw lose(expired); // outside stateLock: the hook and listeners run here
            if (newTtl != null && !newTtl.equals(options.ttl())) changeTtl(newTtl);
            Duration ttl = options.ttl();
            long sent = time.nanoTime();
            long landed;
            unconfirmedTtlNanos = unconfirmedTtlNanos == 0 ? ttl.toNanos() : Math.min(unconfirmedTtlNanos, ttl.toNanos());
            try {
                landed = renewInStore(ttl, sent);
            } catch (LeaseLostException e) {
                throw lose(e);
            } catch (RuntimeException | Error e) { // an Error too, e.g. a thread the store's client could not start
                renewalFailed(e instanceof RuntimeException r ? r
                        : new LockBackendException("the renewal of the lease on '" + key + "' failed: " + e, true, e));
                throw e;
            }
            long validFor;
            stateLock.lock();
            try {
                if (state == State.LOST) throw lostCause; // the deadline fired while we were renewing
                // this very write is what the store holds, with this TTL; an earlier one may carry a shorter
                long heldFor = landed == sent ? ttl.toNanos() : unconfirmedTtlNanos;
                unconfirmedTtlNanos = 0;
                long until = landed + heldFor - marginNanos;
                if (until - validUntilNanos > 0) {
                    validUntilNanos = until;
                    expiresAt = time.now().plusNanos(until + marginNanos - time.nanoTime());
                }
                renewalFailing = false;
                validFor = validUntilNanos - time.nanoTime();
                timer.renewed(landed);
            } finally {
                stateLock.unlock();
            }
            events.renewed(key, Duration.ofNanos(Math.max(0, validFor)));
        } finally {
            io.unlock();
        }
    }

    /** Under {@code io}: switches to {@code ttl} before its first write is sent. */
    private void changeTtl(Duration ttl) {
        checkTtl(ttl);
        LeaseOptions next = options.withTtl(ttl);
        Duration third = ttl.dividedBy(3);
        // an interval chosen for the old TTL must still renew in time
        if (next.heartbeatEnabled() && next.heartbeat().compareTo(third) > 0) next = next.withHeartbeat(third);
        long margin = safetyMargin(ttl).toNanos();
        stateLock.lock();
        try {
            options = next;
            marginNanos = margin;
            long now = time.nanoTime();
            long until = now + ttl.toNanos() - margin;
            if (until - validUntilNanos < 0) { // shorter: until the new write lands, the old one may be all the store keeps
                validUntilNanos = until;
                expiresAt = time.now().plus(ttl);
            }
            timer.reschedule();
        } finally {
            stateLock.unlock();
        }
    }

    @Override
    public final void release() {
        stateLock.lock();
        try {
            if (kept) return; // released already, with a keep
        } finally {
            stateLock.unlock();
        }
        releaser.release();
    }

    /**
     * Releases, keeping the key taken for {@code keepFor} from now: one renewal by {@code keepFor}
     * as the TTL, then no more. The lease is invalid and released from then on (its listeners never
     * fire), and the store frees the key when that TTL runs out, whether this process lives or not
     * (unless the store frees a dead holder's keys at once: {@code HOLDER_DEATH_DETECTION});
     * the backend lets go of what it holds locally then ({@link #afterLoss}, as when a lease runs out).
     *
     * @throws IllegalArgumentException the backend cannot hold a lease of {@code keepFor}; nothing changed
     * @throws LeaseLostException       the lease had already been lost
     * @throws LockBackendException     the renewal failed: nothing changed, the lease is still held
     */
    @Override
    public final void release(Duration keepFor) {
        if (keepFor.isZero() || keepFor.isNegative()) {
            release();
            return;
        }
        io.lock();
        try {
            renewWith(LeaseOptions.ttl(keepFor).ttl());
            stateLock.lock();
            try {
                if (state == State.LOST) throw lostCause;
                kept = true;
                options = options.withoutHeartbeat();
                listeners.clear();
                timer.reschedule(); // the deadline alone
            } finally {
                stateLock.unlock();
            }
            events.released(key, events.since(grantedNanos), true);
        } finally {
            io.unlock();
        }
    }

    @Override
    public final void close() {
        release();
    }

    @Override
    public final void onLost(Consumer<? super LeaseLostException> listener) {
        LeaseLostException cause;
        stateLock.lock();
        try {
            if (state != State.LOST) {
                if (state == State.HELD && !kept) listeners.add(listener);
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

    /** A renewal failed without losing the lease (a store error, or no renewer thread): recorded and reported. */
    void renewalFailed(RuntimeException error) {
        long left;
        stateLock.lock();
        try {
            renewalFailing = true;
            left = validUntilNanos - time.nanoTime();
        } finally {
            stateLock.unlock();
        }
        events.renewalFailed(key, Duration.ofNanos(Math.max(0, left)), error);
    }

    /** Records the loss once, then runs the hook and the listeners; returns the cause to throw. */
    LeaseLostException lose(LeaseLostException cause) {
        List<Consumer<? super LeaseLostException>> toCall;
        boolean wasHeld;
        boolean released;
        stateLock.lock();
        try {
            // HELD, or RELEASING when a release finds the lease already lost
            if (state == State.LOST || state == State.RELEASED) return lostCause != null ? lostCause : cause;
            wasHeld = state == State.HELD;
            released = kept; // a kept release's deadline: the end the caller asked for, not a loss
            state = released ? State.RELEASED : State.LOST;
            if (!released) lostCause = cause;
            timer.cancel();
            toCall = List.copyOf(listeners);
            listeners.clear();
        } finally {
            stateLock.unlock();
        }
        if (wasHeld) runtime.leaseEnded();
        if (!released) events.lost(key, events.since(grantedNanos), cause);
        // Errors too, here and below: this may run on the timer, and every listener must hear of the loss
        try {
            afterLoss(cause);
        } catch (RuntimeException | Error e) {
            LOG.log(Level.WARNING, "cleanup after losing lease on '" + key + "' failed", e);
        }
        for (Consumer<? super LeaseLostException> l : toCall) {
            try {
                l.accept(cause);
            } catch (RuntimeException | Error e) {
                LOG.log(Level.WARNING, "lease-lost listener for '" + key + "' threw", e);
            }
        }
        return cause;
    }

    /** Under {@code stateLock}: the loss of a lease whose deadline passed without a renewal landing. */
    LeaseLostException deadlinePassed() {
        String ttl = "ttl " + options.ttl().toMillis() + "ms";
        String next = "; another holder may take it once the TTL has passed";
        LockBackendException noRenewer = timer.renewerMissing();
        if (noRenewer != null) {
            return new LeaseLostException(Reason.NO_RENEWER_THREAD, "lease on '" + key + "' was not renewed in time ("
                    + ttl + "): could not start a renewer thread (the process or its container may be at its thread"
                    + " limit: ulimit -u, a cgroup's pids.max)" + next, noRenewer.getCause());
        }
        // a heartbeat still waiting for the store at the deadline counts as a failed one
        return renewalFailing || timer.heartbeatInFlight()
                ? new LeaseLostException(Reason.STORE_UNREACHABLE, "lease on '" + key + "' could not be renewed in time: the"
                        + " store failed or had not answered by the lease's deadline (" + ttl + ")" + next)
                : new LeaseLostException(Reason.EXPIRED, "lease on '" + key + "' was not renewed in time (" + ttl + ")" + next);
    }
}
