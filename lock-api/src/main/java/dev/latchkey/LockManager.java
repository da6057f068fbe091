package dev.latchkey;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.locks.Lock;

/**
 * Locks of one backend, opened from a URI by {@link Latchkey#open(String)}. Thread-safe; share one
 * per process and backend. Closing it releases nothing by itself: leases end by release or TTL.
 *
 * <p>Every implementation keeps the contract checked by the TCK: at most one valid lease per key;
 * a holder that stops renewing loses the lock at its TTL and never earlier; only the holder's lease
 * can renew or release; keys are validated before any I/O ({@link InvalidLockKeyException}); store
 * failures surface as {@link LockBackendException}, never as a silent success.
 */
public interface LockManager extends AutoCloseable {

    /** One attempt; never waits for a held lock. Empty when someone else holds it. */
    default Optional<Lease> tryAcquire(String key) {
        return tryAcquire(key, LeaseOptions.defaults());
    }

    Optional<Lease> tryAcquire(String key, LeaseOptions options);

    /**
     * Waits up to {@code maxWait} for the lock.
     *
     * @throws LockTimeoutException naming the holder when the wait ran out
     */
    default Lease acquire(String key, Duration maxWait) {
        return acquire(key, maxWait, LeaseOptions.defaults());
    }

    Lease acquire(String key, Duration maxWait, LeaseOptions options);

    /**
     * {@link #acquire} on {@code executor}; the future completes with the lease, or with the
     * exception acquire threw ({@link LockTimeoutException} when the wait ran out). Cancelling the
     * future does not stop the acquisition; a lease granted after the future was cancelled or
     * completed otherwise is released at once, so no lease is left held that nobody has.
     */
    default CompletableFuture<Lease> acquireAsync(String key, Duration maxWait, LeaseOptions options, Executor executor) {
        CompletableFuture<Lease> future = new CompletableFuture<>();
        executor.execute(() -> {
            try {
                Lease lease = acquire(key, maxWait, options);
                if (!future.complete(lease)) lease.release();
            } catch (RuntimeException | Error e) {
                future.completeExceptionally(e);
            }
        });
        return future;
    }

    /**
     * Runs {@code work} on this thread under a lease of {@code key} (waiting up to {@code maxWait}
     * for it) and releases it after. If the lease is lost while the work runs, this thread is
     * interrupted, and the call throws that {@link LeaseLostException}, whose
     * {@link LeaseLostException#reason()} says why, instead of returning the work's result (what
     * the work threw is attached as suppressed). Work that blocks (I/O, sleep, wait) sees the
     * interrupt; a busy loop must check {@link Thread#isInterrupted()}.
     *
     * @throws LockTimeoutException the lock was not free within {@code maxWait}; the work did not run
     */
    default <T> T callLocked(String key, Duration maxWait, Callable<T> work) throws Exception {
        return callLocked(key, maxWait, LeaseOptions.defaults(), work);
    }

    /** {@link #callLocked(String, Duration, Callable)} with these lease options. */
    default <T> T callLocked(String key, Duration maxWait, LeaseOptions options, Callable<T> work) throws Exception {
        return LockedCall.call(this, key, maxWait, options, work);
    }

    /**
     * A {@link Lock} view of {@code key}: {@code lock()} acquires a lease with {@code options},
     * {@code unlock()} releases it. Not reentrant, owned by the locking thread, no conditions, and a
     * lease can be lost while held; see {@link LeaseLock} for where it differs from {@link Lock}.
     */
    default LeaseLock asLock(String key, LeaseOptions options) {
        return new LeaseLock(this, key, options);
    }

    /** The current holder as recorded by the store, if the key is held. */
    Optional<LockInfo> inspect(String key);

    /**
     * Held locks whose keys start with {@code prefix}.
     *
     * @throws UnsupportedOperationException when {@link Capability#LIST} is not declared
     */
    List<LockInfo> list(String prefix);

    /**
     * Breaks the lock whoever holds it. The broken holder's next renew or release raises
     * {@link LeaseLostException}. Returns whether a held lock was broken.
     */
    boolean forceRelease(String key);

    /**
     * Breaks the lock only if lease {@code leaseId} (as {@link LockInfo#leaseId()} showed it) still
     * holds it: a holder that released meanwhile, and whoever acquired the key after it, are left
     * alone. Use this, not {@link #forceRelease(String)}, to break a holder you inspected. Returns
     * whether that lease was broken.
     */
    boolean forceRelease(String key, String leaseId);

    Set<Capability> capabilities();

    /** The backend URI with every secret masked. */
    String description();

    @Override
    void close();
}
