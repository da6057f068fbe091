package dev.latchkey.spring;

import dev.latchkey.LeaseOptions;
import dev.latchkey.LockManager;
import org.springframework.integration.support.locks.DistributedLock;

/**
 * A {@link LatchkeyLockRegistry} lock: a {@link LeaseLock}, with its guarantee, as Spring Integration
 * 7's {@link DistributedLock}. Kept apart from {@link LeaseLock} because {@code DistributedLock} does
 * not exist in Spring Integration 6, where {@link LatchkeySi6LockRegistry} hands out plain
 * {@link LeaseLock}s.
 */
final class LatchkeyLock extends LeaseLock implements DistributedLock {
    LatchkeyLock(String key, LockManager locks, LeaseOptions defaults) {
        super(key, locks, defaults);
    }
}
