package dev.latchkey.tck;

import dev.latchkey.Capability;
import dev.latchkey.Lease;
import dev.latchkey.LeaseOptions;
import dev.latchkey.LockInfo;
import dev.latchkey.LockManager;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * A manager that hands every call to {@code real}, each granted lease through {@link #wrap}: the base
 * of the kit self-test's broken variants, which override only what they break.
 */
abstract class ForwardingLockManager implements LockManager {
    final LockManager real;
    private final String label;

    /** @param label what the variant breaks, prefixed to {@code real}'s description */
    ForwardingLockManager(String label, LockManager real) {
        this.label = label;
        this.real = real;
    }

    /** The lease the caller gets for one {@code real} granted; unchanged by default. */
    Lease wrap(Lease lease) {
        return lease;
    }

    @Override public Optional<Lease> tryAcquire(String key, LeaseOptions options) { return real.tryAcquire(key, options).map(this::wrap); }
    @Override public Lease acquire(String key, Duration maxWait, LeaseOptions options) { return wrap(real.acquire(key, maxWait, options)); }
    @Override public Optional<LockInfo> inspect(String key) { return real.inspect(key); }
    @Override public List<LockInfo> list(String prefix) { return real.list(prefix); }
    @Override public boolean forceRelease(String key) { return real.forceRelease(key); }
    @Override public boolean forceRelease(String key, String leaseId) { return real.forceRelease(key, leaseId); }
    @Override public Set<Capability> capabilities() { return real.capabilities(); }
    @Override public String description() { return label + ":" + real.description(); }
    @Override public void close() { real.close(); }
}
