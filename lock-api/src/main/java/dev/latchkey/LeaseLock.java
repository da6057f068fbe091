package dev.latchkey;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A {@link Lock} view of one key of a {@link LockManager} ({@link LockManager#asLock}): locking
 * acquires a lease with the view's options, unlocking releases it. Thread-safe.
 *
 * <p><b>Guarantee.</b> While a thread holds this lock, it holds a lease on the key: no other holder
 * anywhere — another process, another manager, another view — holds it, for as long as
 * {@link #lease()}{@code .isValid()}.
 *
 * <p><b>Where it differs from {@link Lock}'s contract.</b>
 * <ul>
 *   <li>Not reentrant: the holding thread locking again gets {@link IllegalStateException} (at
 *       once, rather than waiting on itself).</li>
 *   <li>Owned by a thread, as {@link java.util.concurrent.locks.ReentrantLock} is: {@link #unlock()}
 *       from another thread throws {@link IllegalMonitorStateException}.</li>
 *   <li>The lock can be lost while held (broken, expired, store unreachable): {@link #unlock()}
 *       then throws the {@link LeaseLostException} with its reason, and the lock is no longer held.
 *       Check {@link #lease()} or use {@link Lease#onLost} where that matters.</li>
 *   <li>Store failures surface as {@link LockBackendException} from every method.</li>
 *   <li>{@link #newCondition()} is not supported.</li>
 * </ul>
 */
public final class LeaseLock implements Lock {
    /** {@code lock()} waits in slices of this (an acquire's wait must be finite). */
    private static final Duration SLICE = Duration.ofHours(1);

    private final LockManager manager;
    private final String key;
    private final LeaseOptions options;
    private final ReentrantLock state = new ReentrantLock();
    private Lease lease;   // guarded by state
    private Thread holder; // guarded by state

    LeaseLock(LockManager manager, String key, LeaseOptions options) {
        this.manager = Objects.requireNonNull(manager, "manager");
        this.key = LockKeys.validate(key);
        this.options = Objects.requireNonNull(options, "options");
    }

    /** Waits without bound; an interrupt does not end the wait, and is kept for the caller. */
    @Override
    public void lock() {
        boolean interrupted = false;
        while (true) {
            try {
                lockedWith(acquireEventually());
                break;
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) Thread.currentThread().interrupt();
    }

    @Override
    public void lockInterruptibly() throws InterruptedException {
        lockedWith(acquireEventually());
    }

    @Override
    public boolean tryLock() {
        refuseReentry();
        return manager.tryAcquire(key, options).map(this::lockedWith).orElse(false);
    }

    @Override
    public boolean tryLock(long time, TimeUnit unit) throws InterruptedException {
        Lease l = acquireWithin(Duration.ofNanos(unit.toNanos(time)));
        return l != null && lockedWith(l);
    }

    /**
     * Releases the lease.
     *
     * @throws IllegalMonitorStateException the current thread does not hold this lock
     * @throws LeaseLostException           the lease had been lost meanwhile (the lock is not held any more)
     * @throws LockBackendException         the store did not confirm the release (the key frees by its TTL at the latest)
     */
    @Override
    public void unlock() {
        Lease l;
        state.lock();
        try {
            if (holder != Thread.currentThread()) {
                throw new IllegalMonitorStateException("lock '" + key + "' is not held by this thread");
            }
            l = lease;
            lease = null;
            holder = null;
        } finally {
            state.unlock();
        }
        l.release();
    }

    /** Not supported: a lease has no condition queue. */
    @Override
    public Condition newCondition() {
        throw new UnsupportedOperationException("a lease lock has no conditions; use a java.util.concurrent lock inside it");
    }

    /** The lease the current thread holds through this lock, if it does. */
    public Optional<Lease> lease() {
        state.lock();
        try {
            return holder == Thread.currentThread() ? Optional.of(lease) : Optional.empty();
        } finally {
            state.unlock();
        }
    }

    private Lease acquireEventually() throws InterruptedException {
        while (true) {
            Lease l = acquireWithin(SLICE);
            if (l != null) return l;
        }
    }

    /** The lease, or null if the wait ran out; an interrupt before or during the wait ends it. */
    private Lease acquireWithin(Duration wait) throws InterruptedException {
        refuseReentry();
        if (Thread.interrupted()) throw new InterruptedException("interrupted before locking '" + key + "'");
        try {
            return manager.acquire(key, wait, options);
        } catch (LockTimeoutException e) {
            return null;
        } catch (LockException e) {
            if (Thread.interrupted()) {
                InterruptedException ie = new InterruptedException("interrupted while locking '" + key + "'");
                ie.initCause(e);
                throw ie;
            }
            throw e;
        }
    }

    private boolean lockedWith(Lease l) {
        state.lock();
        try {
            lease = l;
            holder = Thread.currentThread();
        } finally {
            state.unlock();
        }
        return true;
    }

    private void refuseReentry() {
        state.lock();
        try {
            if (holder == Thread.currentThread()) {
                throw new IllegalStateException("lock '" + key + "' is already held by this thread; lease locks are not reentrant");
            }
        } finally {
            state.unlock();
        }
    }

    @Override
    public String toString() {
        return "LeaseLock[" + key + " on " + manager.description() + "]";
    }
}
