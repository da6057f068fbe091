package dev.latchkey.spring;

import dev.latchkey.Lease;
import dev.latchkey.LeaseLostException;
import dev.latchkey.LeaseOptions;
import dev.latchkey.LockException;
import dev.latchkey.LockManager;
import dev.latchkey.LockTimeoutException;
import java.time.Duration;
import java.util.ConcurrentModificationException;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import org.springframework.integration.support.locks.DistributedLock;

/**
 * One key of a {@link LatchkeyLockRegistry}: a {@link java.util.concurrent.locks.Lock} backed by a
 * Latchkey lease. Thread-safe.
 *
 * <p><b>Guarantee.</b> While a thread holds this lock, this process holds a lease on the key, and the
 * lease's guarantee applies: while it is valid no other holder anywhere has the key. Within the
 * process a local {@link ReentrantLock} orders threads, so the lock is <em>re-entrant</em> and
 * <em>owned by the thread</em> that took it (as Spring's own registries are): the lease is acquired
 * when the hold count goes from 0 to 1 and released when it returns to 0; {@link #unlock()} by
 * another thread throws {@link IllegalMonitorStateException}.
 *
 * <p><b>Where it differs from {@code Lock}.</b> A lease can be lost while held (a store outage past
 * the safety margin, a force release): the thread still holds this lock locally until it unlocks,
 * and {@link #unlock()} then throws {@link ConcurrentModificationException} (Spring's registries do
 * the same) whose cause is the {@link LeaseLostException}; the current holder is not disturbed.
 * {@link #newCondition()} is unsupported. A store error while acquiring surfaces as
 * {@link dev.latchkey.LockBackendException} and leaves the lock unheld.
 */
final class LatchkeyLock implements DistributedLock {
    /** Longest single store wait of an unbounded {@code lock()}: it then waits again. */
    private static final Duration WAIT_SLICE = Duration.ofMinutes(1);

    private final String key;
    private final LockManager locks;
    private final LeaseOptions defaults;
    private final ReentrantLock local = new ReentrantLock();
    /** Set by the owning thread under {@link #local}; read by it and by renewals. */
    private volatile Lease lease;
    private volatile long lastUsedNanos = System.nanoTime();

    LatchkeyLock(String key, LockManager locks, LeaseOptions defaults) {
        this.key = key;
        this.locks = locks;
        this.defaults = defaults;
    }

    @Override
    public void lock() {
        lock(defaults.ttl());
    }

    @Override
    public void lock(Duration ttl) {
        LeaseOptions options = defaults.withTtl(ttl);
        local.lock();
        if (local.getHoldCount() > 1) return;
        boolean interrupted = false;
        try {
            while (lease == null) {
                try {
                    lease = locks.acquire(key, WAIT_SLICE, options);
                } catch (LockTimeoutException e) {
                    // Lock.lock() waits for as long as it takes
                } catch (LockException e) {
                    // Lock.lock() is not interruptible: note the interrupt, wait on, and restore it
                    if (!Thread.interrupted()) throw e;
                    interrupted = true;
                }
            }
        } catch (RuntimeException | Error e) {
            local.unlock();
            throw e;
        } finally {
            if (interrupted) Thread.currentThread().interrupt();
        }
    }

    @Override
    public void lockInterruptibly() throws InterruptedException {
        local.lockInterruptibly();
        if (local.getHoldCount() > 1) return;
        try {
            while (lease == null) {
                try {
                    lease = acquire(WAIT_SLICE, defaults);
                } catch (LockTimeoutException e) {
                    // no deadline: wait again
                }
            }
        } catch (InterruptedException | RuntimeException | Error e) {
            local.unlock();
            throw e;
        }
    }

    @Override
    public boolean tryLock() {
        if (!local.tryLock()) return false;
        if (local.getHoldCount() > 1) return true;
        try {
            Optional<Lease> taken = locks.tryAcquire(key, defaults);
            if (taken.isEmpty()) {
                local.unlock();
                return false;
            }
            lease = taken.get();
            return true;
        } catch (RuntimeException | Error e) {
            local.unlock();
            throw e;
        }
    }

    @Override
    public boolean tryLock(long time, TimeUnit unit) throws InterruptedException {
        return tryLock(Duration.ofNanos(unit.toNanos(time)), defaults.ttl());
    }

    @Override
    public boolean tryLock(Duration waitTime, Duration ttl) throws InterruptedException {
        LeaseOptions options = defaults.withTtl(ttl);
        long deadline = System.nanoTime() + Math.max(0, waitTime.toNanos());
        if (!local.tryLock(Math.max(0, waitTime.toNanos()), TimeUnit.NANOSECONDS)) return false;
        if (local.getHoldCount() > 1) return true;
        try {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                lease = locks.tryAcquire(key, options).orElse(null);
            } else {
                try {
                    lease = acquire(Duration.ofNanos(left), options);
                } catch (LockTimeoutException e) {
                    lease = null;
                }
            }
        } catch (InterruptedException | RuntimeException | Error e) {
            local.unlock();
            throw e;
        }
        if (lease == null) local.unlock();
        return lease != null;
    }

    /** One bounded store wait that answers an interrupt with {@link InterruptedException}. */
    private Lease acquire(Duration maxWait, LeaseOptions options) throws InterruptedException {
        if (Thread.interrupted()) throw new InterruptedException("interrupted before waiting for '" + key + "'");
        try {
            return locks.acquire(key, maxWait, options);
        } catch (LockTimeoutException e) {
            throw e;
        } catch (LockException e) {
            if (!Thread.interrupted()) throw e;
            InterruptedException interrupted = new InterruptedException("interrupted while waiting for '" + key + "'");
            interrupted.initCause(e);
            throw interrupted;
        }
    }

    /**
     * Releases the lease when the hold count returns to 0.
     *
     * @throws IllegalMonitorStateException   the current thread does not hold this lock
     * @throws ConcurrentModificationException the lease had been lost (cause: the {@link LeaseLostException});
     *                                         the lock is unheld all the same
     * @throws dev.latchkey.LockBackendException the store did not confirm the release: the key frees by its TTL
     *                                         at the latest; the lock is unheld all the same
     */
    @Override
    public void unlock() {
        if (!local.isHeldByCurrentThread()) {
            throw new IllegalMonitorStateException("lock '" + key + "' is not held by " + Thread.currentThread().getName());
        }
        if (local.getHoldCount() > 1) {
            local.unlock();
            return;
        }
        Lease held = lease;
        lease = null;
        lastUsedNanos = System.nanoTime();
        try {
            held.release();
        } catch (LeaseLostException e) {
            throw new ConcurrentModificationException("the lease on '" + key + "' was lost (" + e.reason()
                    + ") before unlock: work done under this lock may have overlapped with the next holder's; "
                    + "do not keep its results", e);
        } finally {
            local.unlock();
        }
    }

    /** @throws UnsupportedOperationException always: a lease has no condition variables */
    @Override
    public Condition newCondition() {
        throw new UnsupportedOperationException("a Latchkey lock has no conditions: signal through the protected resource");
    }

    /**
     * Extends the lease by its TTL from now.
     *
     * @throws IllegalMonitorStateException the current thread does not hold this lock
     * @throws LeaseLostException           the lease was lost
     */
    void renew() {
        held().renew();
    }

    /** The lease the current thread holds. */
    Lease held() {
        if (!local.isHeldByCurrentThread()) {
            throw new IllegalMonitorStateException("lock '" + key + "' is not held by " + Thread.currentThread().getName());
        }
        return lease;
    }

    /** Not held by any thread here, and last unlocked (or made) more than {@code ageMillis} ago. */
    boolean unusedFor(long ageMillis) {
        return !local.isLocked() && System.nanoTime() - lastUsedNanos > TimeUnit.MILLISECONDS.toNanos(ageMillis);
    }

    @Override
    public String toString() {
        return "LatchkeyLock[" + key + (local.isLocked() ? ", held here" : "") + "]";
    }
}
