package dev.latchkey.spring;

import dev.latchkey.LeaseOptions;
import dev.latchkey.LockKeys;
import dev.latchkey.LockManager;
import java.time.Duration;
import org.springframework.integration.support.locks.DistributedLock;
import org.springframework.integration.support.locks.ExpirableLockRegistry;
import org.springframework.integration.support.locks.RenewableLockRegistry;

/**
 * A Spring Integration 7 lock registry whose locks are Latchkey leases on one {@link LockManager}.
 * Thread-safe. (On Spring Integration 6, which has no {@link DistributedLock}, use
 * {@link LatchkeySi6LockRegistry}, the same registry.)
 *
 * <p><b>Guarantee.</b> {@link #obtain} returns one {@link DistributedLock} per key (until
 * {@link #expireUnusedOlderThan} drops it), re-entrant and owned by the thread that locked it; while
 * it is held, the lease's guarantee holds: no other process, registry or Latchkey client holds the
 * key. Leases renew themselves on the configured heartbeat; {@link #renewLock} is for leases whose
 * heartbeat is off. See {@link LeaseLock} for where this differs from {@code Lock}'s contract.
 *
 * <p>Keys are Latchkey keys ({@link LockKeys#validate}): {@link #obtain} refuses another kind of
 * object or an invalid key before any I/O.
 */
public final class LatchkeyLockRegistry
        implements RenewableLockRegistry<DistributedLock>, ExpirableLockRegistry<DistributedLock> {
    private final LeaseLocks<LatchkeyLock> locks;

    /** @param defaults the options of every lease; {@code lock(ttl)} and {@code tryLock(wait, ttl)} change only the TTL */
    public LatchkeyLockRegistry(LockManager locks, LeaseOptions defaults) {
        this.locks = new LeaseLocks<>(key -> new LatchkeyLock(key, locks, defaults));
    }

    /**
     * @throws IllegalArgumentException           {@code lockKey} is not a {@code String}
     * @throws dev.latchkey.InvalidLockKeyException it is not a valid Latchkey key
     */
    @Override
    public DistributedLock obtain(Object lockKey) {
        return locks.obtain(lockKey);
    }

    /**
     * Extends the current thread's lease on {@code lockKey} by its TTL.
     *
     * @throws IllegalMonitorStateException the current thread does not hold that lock
     * @throws dev.latchkey.LeaseLostException the lease was lost
     */
    @Override
    public void renewLock(Object lockKey) {
        locks.renew(lockKey);
    }

    /**
     * Extends the current thread's lease on {@code lockKey} by {@code ttl} (longer or shorter than its
     * own); its heartbeat renews by {@code ttl} from then on.
     *
     * @throws IllegalMonitorStateException the current thread does not hold that lock
     * @throws IllegalArgumentException     the backend does not take {@code ttl} (its bounds, e.g. Azure
     *                                      blob leases' 15–60 s)
     * @throws dev.latchkey.LeaseLostException the lease was lost
     */
    @Override
    public void renewLock(Object lockKey, Duration ttl) {
        locks.renew(lockKey, ttl);
    }

    /**
     * Forgets locks no thread here holds that were last unlocked more than {@code age} ms ago. A
     * thread that obtained such a lock before and locks it afterwards is still excluded by the store;
     * only re-entrancy with a newer {@link #obtain} of the same key is lost.
     */
    @Override
    public void expireUnusedOlderThan(long age) {
        locks.expireUnusedOlderThan(age);
    }
}
