package dev.latchkey;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Set;

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
