package dev.latchkey.spring;

import dev.latchkey.LeaseOptions;
import dev.latchkey.LockManager;
import java.time.Duration;
import java.util.concurrent.locks.Lock;
import org.springframework.integration.support.locks.ExpirableLockRegistry;
import org.springframework.integration.support.locks.RenewableLockRegistry;

/**
 * {@link LatchkeyLockRegistry} for Spring Integration 6.x (Spring Boot 3), with the same guarantee:
 * one re-entrant, thread-owned lock per key, held while this process holds the key's lease. Its
 * locks are plain {@link Lock}s, since Spring Integration 6 has no {@code DistributedLock}: a lease
 * of another TTL than the registry's ({@code lock(ttl)}, {@code tryLock(wait, ttl)}) is Spring
 * Integration 7's only.
 *
 * <p>Compiled against Spring Integration 7, it implements the interfaces raw, as Spring Integration 6
 * declares them (not generic there), and names no type that exists in 7 only, so that 6 can load it.
 */
@SuppressWarnings("rawtypes") // Spring Integration 6's interfaces are not generic: the raw type is their shape
public final class LatchkeySi6LockRegistry implements RenewableLockRegistry, ExpirableLockRegistry {
    private final LeaseLocks<LeaseLock> locks;

    /** @param defaults the options of every lease */
    public LatchkeySi6LockRegistry(LockManager locks, LeaseOptions defaults) {
        this.locks = new LeaseLocks<>(key -> new LeaseLock(key, locks, defaults));
    }

    /** As {@link LatchkeyLockRegistry#obtain}. */
    @Override
    public Lock obtain(Object lockKey) {
        return locks.obtain(lockKey);
    }

    /** As {@link LatchkeyLockRegistry#renewLock(Object)}. */
    @Override
    public void renewLock(Object lockKey) {
        locks.renew(lockKey);
    }

    /** As {@link LatchkeyLockRegistry#renewLock(Object, Duration)} (Spring Integration 7 declares it; 6 does not call it). */
    @Override
    public void renewLock(Object lockKey, Duration ttl) {
        locks.renew(lockKey, ttl);
    }

    /** As {@link LatchkeyLockRegistry#expireUnusedOlderThan}. */
    @Override
    public void expireUnusedOlderThan(long age) {
        locks.expireUnusedOlderThan(age);
    }
}
