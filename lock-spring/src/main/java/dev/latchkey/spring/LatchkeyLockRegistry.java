package dev.latchkey.spring;

import dev.latchkey.LeaseOptions;
import dev.latchkey.LockKeys;
import dev.latchkey.LockManager;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.springframework.integration.support.locks.DistributedLock;
import org.springframework.integration.support.locks.ExpirableLockRegistry;
import org.springframework.integration.support.locks.RenewableLockRegistry;

/**
 * A Spring Integration lock registry whose locks are Latchkey leases on one {@link LockManager}.
 * Thread-safe.
 *
 * <p><b>Guarantee.</b> {@link #obtain} returns one {@link DistributedLock} per key (until
 * {@link #expireUnusedOlderThan} drops it), re-entrant and owned by the thread that locked it; while
 * it is held, the lease's guarantee holds: no other process, registry or Latchkey client holds the
 * key. Leases renew themselves on the configured heartbeat; {@link #renewLock} is for leases whose
 * heartbeat is off. See {@link LatchkeyLock} for where this differs from {@code Lock}'s contract.
 *
 * <p>Keys are Latchkey keys ({@link LockKeys#validate}): {@link #obtain} refuses another kind of
 * object or an invalid key before any I/O.
 */
public final class LatchkeyLockRegistry
        implements RenewableLockRegistry<DistributedLock>, ExpirableLockRegistry<DistributedLock> {
    private final LockManager locks;
    private final LeaseOptions defaults;
    private final Map<String, LatchkeyLock> byKey = new ConcurrentHashMap<>();

    /** @param defaults the options of every lease; {@code lock(ttl)} and {@code tryLock(wait, ttl)} change only the TTL */
    public LatchkeyLockRegistry(LockManager locks, LeaseOptions defaults) {
        this.locks = locks;
        this.defaults = defaults;
    }

    /**
     * @throws IllegalArgumentException           {@code lockKey} is not a {@code String}
     * @throws dev.latchkey.InvalidLockKeyException it is not a valid Latchkey key
     */
    @Override
    public DistributedLock obtain(Object lockKey) {
        return byKey.computeIfAbsent(key(lockKey), k -> new LatchkeyLock(k, locks, defaults));
    }

    /**
     * Extends the current thread's lease on {@code lockKey} by its TTL.
     *
     * @throws IllegalMonitorStateException the current thread does not hold that lock
     * @throws dev.latchkey.LeaseLostException the lease was lost
     */
    @Override
    public void renewLock(Object lockKey) {
        held(lockKey).renew();
    }

    /**
     * A lease renews by its own TTL only: this works when {@code ttl} is that TTL.
     *
     * @throws UnsupportedOperationException {@code ttl} is another TTL
     */
    @Override
    public void renewLock(Object lockKey, Duration ttl) {
        LatchkeyLock lock = held(lockKey);
        Duration own = lock.held().ttl();
        if (!own.equals(ttl)) {
            throw new UnsupportedOperationException("a Latchkey lease renews by the TTL it was acquired with (" + own
                    + "), not " + ttl + ": lock with lock(ttl) or tryLock(wait, ttl) to choose the TTL");
        }
        lock.renew();
    }

    /**
     * Forgets locks no thread here holds that were last unlocked more than {@code age} ms ago. A
     * thread that obtained such a lock before and locks it afterwards is still excluded by the store;
     * only re-entrancy with a newer {@link #obtain} of the same key is lost.
     */
    @Override
    public void expireUnusedOlderThan(long age) {
        byKey.values().removeIf(lock -> lock.unusedFor(age));
    }

    private LatchkeyLock held(Object lockKey) {
        LatchkeyLock lock = byKey.get(key(lockKey));
        if (lock == null) throw LatchkeyLock.notOwned(key(lockKey));
        return lock;
    }

    private static String key(Object lockKey) {
        if (!(lockKey instanceof String key)) {
            throw new IllegalArgumentException("Latchkey lock keys are strings, not " + (lockKey == null ? "null" : lockKey.getClass().getName()));
        }
        return LockKeys.validate(key);
    }
}
