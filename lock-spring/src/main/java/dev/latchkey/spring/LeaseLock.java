package dev.latchkey.spring;

import dev.latchkey.Lease;
import dev.latchkey.LeaseLostException;
import dev.latchkey.LeaseOptions;
import dev.latchkey.LockBackendException;
import dev.latchkey.LockException;
import dev.latchkey.LockManager;
import dev.latchkey.LockTimeoutException;
import java.time.Duration;
import java.util.ConcurrentModificationException;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.ReentrantLock;

/**
 * One key of a Latchkey lock registry: a {@link Lock} backed by a Latchkey lease. Thread-safe. It
 * names no Spring type, so that both Spring Integration lines can load it: {@link LatchkeyLock} adds
 * Spring Integration 7's {@code DistributedLock} to it, which {@link #lock(Duration)} and
 * {@link #tryLock(Duration, Duration)} already implement.
 *
 * <p><b>Guarantee.</b> While a thread holds this lock, this process holds a lease on the key, and the
 * lease's guarantee applies: while it is valid no other holder anywhere has the key. Within the
 * process a local {@link ReentrantLock} orders threads, so the lock is <em>re-entrant</em> and
 * <em>owned by the thread</em> that took it (as Spring's own registries are): the lease is acquired
 * when the hold count goes from 0 to 1 and released when it returns to 0; {@link #unlock()} by
 * another thread throws {@link IllegalMonitorStateException}. A re-entry succeeds only if the lease
 * still holds, which it asks the store by renewing it (Spring's JDBC registry asks its table on
 * every re-entry too); if the lease was lost, the re-entry acquires a fresh lease exactly as a first
 * lock would (failing, timing out or waiting while another holder has the key), and if it does not
 * get one it takes no hold.
 *
 * <p><b>Where it differs from {@code Lock}.</b> A lease can be lost while held (a store outage past
 * the safety margin, a force release): the thread still holds this lock locally until it unlocks,
 * and the last {@link #unlock()} then throws {@link ConcurrentModificationException} (Spring's
 * registries do the same) whose cause is the {@link LeaseLostException}; the current holder is not
 * disturbed. It throws so even when a re-entry took a fresh lease, since work done under the
 * outer hold may have overlapped with another holder's.
 * {@link #newCondition()} is unsupported. A store error while acquiring surfaces as
 * {@link dev.latchkey.LockBackendException} and leaves the lock unheld.
 */
class LeaseLock implements Lock {
    /** Longest single store wait of an unbounded {@code lock()}: it then waits again. */
    private static final Duration WAIT_SLICE = Duration.ofMinutes(1);

    private final String key;
    private final LockManager locks;
    private final LeaseOptions defaults;
    private final ReentrantLock local = new ReentrantLock();
    /** Set by the owning thread under {@link #local}; read by it and by renewals. */
    private volatile Lease lease;
    /** A loss a re-entry found during the current hold, for the last unlock to report; owning thread only. */
    private LeaseLostException lostDuringHold;
    private volatile long lastUsedNanos = System.nanoTime();

    LeaseLock(String key, LockManager locks, LeaseOptions defaults) {
        this.key = key;
        this.locks = locks;
        this.defaults = defaults;
    }

    @Override
    public void lock() {
        lock(defaults.ttl());
    }

    /** {@link #lock()} with a lease of this TTL. */
    public void lock(Duration ttl) {
        LeaseOptions options = defaults.withTtl(ttl);
        local.lock();
        boolean interrupted = false;
        try {
            if (!needsLease()) return;
            Lease taken = null;
            while (taken == null) {
                try {
                    taken = locks.acquire(key, WAIT_SLICE, options);
                } catch (LockTimeoutException e) {
                    // Lock.lock() waits for as long as it takes
                } catch (LockException e) {
                    // Lock.lock() is not interruptible: note the interrupt, wait on, and restore it
                    if (!Thread.interrupted()) throw e;
                    interrupted = true;
                }
            }
            lease = taken;
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
        try {
            if (!needsLease()) return;
            Lease taken = null;
            while (taken == null) {
                try {
                    taken = acquire(WAIT_SLICE, defaults);
                } catch (LockTimeoutException e) {
                    // no deadline: wait again
                }
            }
            lease = taken;
        } catch (InterruptedException | RuntimeException | Error e) {
            local.unlock();
            throw e;
        }
    }

    @Override
    public boolean tryLock() {
        if (!local.tryLock()) return false;
        try {
            if (!needsLease()) return true;
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

    /** {@link #tryLock(long, TimeUnit)} with a lease of this TTL. */
    public boolean tryLock(Duration waitTime, Duration ttl) throws InterruptedException {
        LeaseOptions options = defaults.withTtl(ttl);
        long deadline = System.nanoTime() + Math.max(0, waitTime.toNanos());
        if (!local.tryLock(Math.max(0, waitTime.toNanos()), TimeUnit.NANOSECONDS)) return false;
        Lease taken;
        try {
            if (!needsLease()) return true;
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                taken = locks.tryAcquire(key, options).orElse(null);
            } else {
                try {
                    taken = acquire(Duration.ofNanos(left), options);
                } catch (LockTimeoutException e) {
                    taken = null;
                }
            }
        } catch (InterruptedException | RuntimeException | Error e) {
            local.unlock();
            throw e;
        }
        if (taken == null) {
            local.unlock();
            return false;
        }
        lease = taken;
        return true;
    }

    /**
     * Called with the local hold just taken: whether a lease must be acquired for it. On the first
     * hold, always; on a re-entry, when the lease turns out to be lost. The caller undoes the hold
     * if it gets no lease, so a failed re-entry leaves the lost lease for the last unlock to report.
     */
    private boolean needsLease() {
        if (local.getHoldCount() == 1) return true;
        Lease held = lease;
        try {
            // a renewal is the lease's own word from the store: a force release or a takeover shows here
            held.renew();
            return false;
        } catch (LeaseLostException e) {
            if (lostDuringHold == null) lostDuringHold = e;
            return true;
        } catch (LockBackendException e) {
            // no answer from the store: the lease's own deadline decides, as it does for its heartbeat
            if (held.isValid()) return false;
            if (lostDuringHold == null) {
                lostDuringHold = new LeaseLostException(LeaseLostException.Reason.STORE_UNREACHABLE,
                        "the lease on '" + key + "' ran out while the store could not renew it", e);
            }
            return true;
        }
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
     * @throws IllegalMonitorStateException   the current thread does not own this lock
     * @throws ConcurrentModificationException the last unlock, when the lease had been lost at any time during
     *                                         the hold, even if a re-entry then took a fresh one (cause: the
     *                                         first {@link LeaseLostException}); the lock is unheld all the same
     * @throws LockBackendException           the store did not confirm the release: the key frees by its TTL
     *                                         at the latest; the lock is unheld all the same
     */
    @Override
    public void unlock() {
        if (!local.isHeldByCurrentThread()) throw notOwned(key);
        if (local.getHoldCount() > 1) {
            local.unlock();
            return;
        }
        Lease held = lease;
        LeaseLostException lost = lostDuringHold;
        lease = null;
        lostDuringHold = null;
        lastUsedNanos = System.nanoTime();
        try {
            held.release();
        } catch (LeaseLostException e) {
            throw lostBeforeUnlock(lost != null ? lost : e);
        } catch (LockBackendException e) {
            if (lost == null) throw e;
            ConcurrentModificationException reported = lostBeforeUnlock(lost);
            reported.addSuppressed(e);
            throw reported;
        } finally {
            local.unlock();
        }
        // a re-entry replaced a lost lease: the outer hold still spanned the loss
        if (lost != null) throw lostBeforeUnlock(lost);
    }

    private ConcurrentModificationException lostBeforeUnlock(LeaseLostException lost) {
        return new ConcurrentModificationException("the lease on '" + key + "' was lost (" + lost.reason()
                + ") before unlock: work done under this lock may have overlapped with the next holder's; "
                + "do not keep its results", lost);
    }

    /** Spring Integration's own registries say "doesn't own" (JdbcLockRegistry's exact words); code and tests match on them. */
    static IllegalMonitorStateException notOwned(String key) {
        return new IllegalMonitorStateException("The current thread doesn't own a lock for: " + key
                + " (thread " + Thread.currentThread().getName() + ")");
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
        if (!local.isHeldByCurrentThread()) throw notOwned(key);
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
