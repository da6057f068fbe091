package dev.latchkey.spring;

import dev.latchkey.LockKeys;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

/**
 * The registry logic both Spring Integration lines share: one lock per key (until expired), and
 * renewal of the current thread's lease. Thread-safe. The registries wrap it in their line's
 * interfaces: {@link LatchkeyLockRegistry} (7.x) and {@link LatchkeySi6LockRegistry} (6.x).
 */
final class LeaseLocks<L extends LeaseLock> {
    private final Map<String, L> byKey = new ConcurrentHashMap<>();
    private final Function<String, L> newLock;

    LeaseLocks(Function<String, L> newLock) {
        this.newLock = newLock;
    }

    L obtain(Object lockKey) {
        return byKey.computeIfAbsent(key(lockKey), newLock);
    }

    void renew(Object lockKey) {
        held(lockKey).renew();
    }

    /** A lease renews by its own TTL only (until lock-api can renew with another): this works when {@code ttl} is that TTL. */
    void renew(Object lockKey, Duration ttl) {
        L lock = held(lockKey);
        Duration own = lock.held().ttl();
        if (!own.equals(ttl)) {
            throw new UnsupportedOperationException("a Latchkey lease renews by the TTL it was acquired with (" + own
                    + "), not " + ttl + ": lock with lock(ttl) or tryLock(wait, ttl) to choose the TTL");
        }
        lock.renew();
    }

    void expireUnusedOlderThan(long age) {
        byKey.values().removeIf(lock -> lock.unusedFor(age));
    }

    private L held(Object lockKey) {
        L lock = byKey.get(key(lockKey));
        if (lock == null) throw LeaseLock.notOwned(key(lockKey));
        return lock;
    }

    private static String key(Object lockKey) {
        if (!(lockKey instanceof String key)) {
            throw new IllegalArgumentException("Latchkey lock keys are strings, not " + (lockKey == null ? "null" : lockKey.getClass().getName()));
        }
        return LockKeys.validate(key);
    }
}
