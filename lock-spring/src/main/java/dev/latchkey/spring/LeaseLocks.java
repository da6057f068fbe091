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

    /** Renews with {@code ttl}, longer or shorter than the lease's own; later renewals (the heartbeat) use it too. */
    void renew(Object lockKey, Duration ttl) {
        held(lockKey).held().renew(ttl);
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
