package dev.latchkey.shedlock;

import dev.latchkey.Lease;
import dev.latchkey.LeaseOptions;
import dev.latchkey.LockManager;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import net.javacrumbs.shedlock.core.ExtensibleLockProvider;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.SimpleLock;

/**
 * A ShedLock {@link ExtensibleLockProvider} over any Latchkey {@link LockManager}, so every Latchkey
 * backend is a ShedLock lock provider. Thread-safe; the manager stays the caller's to close.
 *
 * <p><b>Guarantee.</b> A lock it returns is a Latchkey lease on the lock's name (the key, unchanged,
 * after an optional prefix), with Latchkey's guarantee: no two {@link SimpleLock}s of one name are held
 * at once, across every process sharing the store. ShedLock's settings map to it as follows:
 * <ul>
 *   <li>{@code lockAtMostFor} is the lease's TTL, with <em>no heartbeat</em>: as in every ShedLock
 *       provider, the lock is held at most that long even if the task hangs. (Latchkey's own TTLs are
 *       at least {@link LeaseOptions#MIN_TTL}; a shorter {@code lockAtMostFor} is held that long in the
 *       store, and the lock counts as expired after {@code lockAtMostFor} all the same.) Wrap the
 *       provider in ShedLock's {@code KeepAliveLockProvider} for a heartbeat.</li>
 *   <li>{@code extend(lockAtMostFor, lockAtLeastFor)} renews the lease with {@code lockAtMostFor} as
 *       its new TTL ({@link Lease#renew(Duration)}), from now; a lock past its {@code lockAtMostFor}
 *       is given back and not extended.</li>
 *   <li>{@code unlock()} before {@code lockAtLeastFor} has passed keeps the key until then, held
 *       by the store ({@link Lease#release(Duration)}), so it stays taken if this process dies, on
 *       every backend that does not free a dead holder's keys at once
 *       ({@link dev.latchkey.Capability#HOLDER_DEATH_DETECTION}: {@code file://}, PostgreSQL's
 *       advisory mode) ({@link LatchkeySimpleLock}).</li>
 * </ul>
 * A failing store makes {@link #lock} throw the backend's {@link dev.latchkey.LockBackendException}
 * (ShedLock's executor then skips the task and logs it), never return a lock it does not hold.
 */
public final class LatchkeyLockProvider implements ExtensibleLockProvider {
    private final LockManager locks;
    private final String keyPrefix;
    private final String owner;

    /** Locks named as ShedLock names them, owned by this process's default owner. */
    public LatchkeyLockProvider(LockManager locks) {
        this(locks, "", LeaseOptions.defaults().owner());
    }

    /**
     * @param keyPrefix put before each lock's name to make its key ({@code "shedlock/"}, or "")
     * @param owner     the owner the leases record ({@code latchkey status} shows it)
     */
    public LatchkeyLockProvider(LockManager locks, String keyPrefix, String owner) {
        this.locks = Objects.requireNonNull(locks, "locks");
        this.keyPrefix = Objects.requireNonNull(keyPrefix, "keyPrefix");
        this.owner = Objects.requireNonNull(owner, "owner");
    }

    @Override
    public Optional<SimpleLock> lock(LockConfiguration config) {
        Optional<Lease> lease = locks.tryAcquire(keyPrefix + config.getName(), options(config.getLockAtMostFor()));
        return lease.map(l -> new LatchkeySimpleLock(config, l));
    }

    /** A lease without heartbeat held for {@code lockAtMostFor} (at least the shortest TTL Latchkey takes). */
    LeaseOptions options(Duration lockAtMostFor) {
        return LeaseOptions.ttl(ttl(lockAtMostFor)).withoutHeartbeat().withOwner(owner);
    }

    static Duration ttl(Duration lockAtMostFor) {
        return lockAtMostFor.compareTo(LeaseOptions.MIN_TTL) < 0 ? LeaseOptions.MIN_TTL : lockAtMostFor;
    }

    @Override
    public String toString() {
        return "LatchkeyLockProvider[" + locks.description() + (keyPrefix.isEmpty() ? "" : ", prefix " + keyPrefix) + "]";
    }
}
