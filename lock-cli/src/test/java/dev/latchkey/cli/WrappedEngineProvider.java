package dev.latchkey.cli;

import dev.latchkey.Capability;
import dev.latchkey.Lease;
import dev.latchkey.LeaseOptions;
import dev.latchkey.LockInfo;
import dev.latchkey.LockManager;
import dev.latchkey.engine.ConditionalStoreLockManager;
import dev.latchkey.mem.MemConditionalStore;
import dev.latchkey.spi.ConditionalStore;
import dev.latchkey.spi.LockContext;
import dev.latchkey.spi.LockProvider;
import dev.latchkey.spi.LockUri;
import dev.latchkey.spi.StoredRecord;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * Test backend {@code wrapped://NAME}: a manager that wraps the lease engine over the
 * {@code mem://NAME} store (as a backend adding behaviour of its own would: the engine is final),
 * so it is no {@link ConditionalStoreLockManager}, and exposes that store through {@link LockProvider#openStore}.
 * {@code wrapped://lying-NAME} exposes a store whose {@code create} is not conditional (it
 * overwrites an existing record): the locks stay correct, the store does not, and
 * {@code latchkey check} must say so.
 */
public final class WrappedEngineProvider implements LockProvider {
    @Override
    public Set<String> schemes() {
        return Set.of("wrapped");
    }

    @Override
    public String description() {
        return "test: the lease engine over mem://, wrapped";
    }

    @Override
    public LockManager open(LockUri uri, LockContext context) {
        return new Wrapped(new ConditionalStoreLockManager(MemConditionalStore.named(name(uri)), context, Set.of()));
    }

    @Override
    public Optional<ConditionalStore> openStore(LockUri uri, LockContext context) {
        MemConditionalStore store = MemConditionalStore.named(name(uri));
        return Optional.of(uri.host().startsWith("lying-") ? new CreateOverwrites(store) : store);
    }

    private static String name(LockUri uri) {
        return "wrapped-" + uri.host() + uri.path();
    }

    private record Wrapped(ConditionalStoreLockManager engine) implements LockManager {
        @Override public Optional<Lease> tryAcquire(String key, LeaseOptions options) { return engine.tryAcquire(key, options); }
        @Override public Lease acquire(String key, Duration maxWait, LeaseOptions options) { return engine.acquire(key, maxWait, options); }
        @Override public Optional<LockInfo> inspect(String key) { return engine.inspect(key); }
        @Override public List<LockInfo> list(String prefix) { return engine.list(prefix); }
        @Override public boolean forceRelease(String key) { return engine.forceRelease(key); }
        @Override public boolean forceRelease(String key, String leaseId) { return engine.forceRelease(key, leaseId); }
        @Override public Set<Capability> capabilities() { return engine.capabilities(); }
        @Override public String description() { return "wrapped " + engine.description(); }
        @Override public void close() { engine.close(); }
    }

    /** A store that breaks the one rule: create of an existing name overwrites it. */
    private record CreateOverwrites(MemConditionalStore store) implements ConditionalStore {
        @Override
        public Optional<String> create(String name, byte[] data) {
            Optional<StoredRecord> existing = store.read(name);
            return existing.isPresent() ? store.replace(name, existing.get().version(), data) : store.create(name, data);
        }

        @Override public Optional<StoredRecord> read(String name) { return store.read(name); }
        @Override public Optional<String> replace(String name, String expected, byte[] data) { return store.replace(name, expected, data); }
        @Override public boolean delete(String name, String expected) { return store.delete(name, expected); }
        @Override public List<String> list(String prefix) { return store.list(prefix); }
        @Override public String describe() { return "lying " + store.describe(); }
        @Override public void close() { store.close(); }
    }
}
