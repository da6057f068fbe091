package dev.latchkey.spi;

import static org.assertj.core.api.Assertions.assertThat;

import dev.latchkey.Capability;
import dev.latchkey.Lease;
import dev.latchkey.LeaseOptions;
import dev.latchkey.LockInfo;
import dev.latchkey.LockManager;
import dev.latchkey.mem.MemLockProvider;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/** {@link LockProvider#openStore}'s default: the store of a lease engine, else empty with the manager closed. */
class LockProviderTest {
    @Test
    void anEngineBackendExposesTheStoreItsManagersLockIn() {
        LockUri uri = LockUri.parse("mem://provider-test");
        LockProvider mem = new MemLockProvider();
        ConditionalStore store = mem.openStore(uri, LockContext.defaults()).orElseThrow();
        assertThat(store.list("")).isEmpty();
        try (LockManager locks = mem.open(uri, LockContext.defaults()); Lease lease = locks.acquire("k", Duration.ZERO)) {
            // the lease's record is in the exposed store: the same store, not a look-alike
            assertThat(store.list("")).isNotEmpty();
            assertThat(locks.inspect("k")).isPresent();
        }
    }

    @Test
    void aManagerThatIsNoEngineExposesNothingAndIsClosed() {
        AtomicBoolean closed = new AtomicBoolean();
        LockProvider wrapping = new LockProvider() {
            @Override public Set<String> schemes() { return Set.of("wrapping"); }
            @Override public String description() { return "test"; }
            @Override public LockManager open(LockUri uri, LockContext context) {
                return new Closing(new MemLockProvider().open(LockUri.parse("mem://provider-test-2"), context), closed);
            }
        };
        assertThat(wrapping.openStore(LockUri.parse("wrapping://x"), LockContext.defaults())).isEmpty();
        assertThat(closed).isTrue();
    }

    private record Closing(LockManager inner, AtomicBoolean closed) implements LockManager {
        @Override public Optional<Lease> tryAcquire(String key, LeaseOptions options) { return inner.tryAcquire(key, options); }
        @Override public Lease acquire(String key, Duration maxWait, LeaseOptions options) { return inner.acquire(key, maxWait, options); }
        @Override public Optional<LockInfo> inspect(String key) { return inner.inspect(key); }
        @Override public List<LockInfo> list(String prefix) { return inner.list(prefix); }
        @Override public boolean forceRelease(String key) { return inner.forceRelease(key); }
        @Override public boolean forceRelease(String key, String leaseId) { return inner.forceRelease(key, leaseId); }
        @Override public Set<Capability> capabilities() { return inner.capabilities(); }
        @Override public String description() { return inner.description(); }
        @Override public void close() { closed.set(true); inner.close(); }
    }
}
