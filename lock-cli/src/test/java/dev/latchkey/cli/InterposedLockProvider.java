package dev.latchkey.cli;

import dev.latchkey.Capability;
import dev.latchkey.Latchkey;
import dev.latchkey.Lease;
import dev.latchkey.LeaseOptions;
import dev.latchkey.LockBackendException;
import dev.latchkey.LockInfo;
import dev.latchkey.LockManager;
import dev.latchkey.spi.LockContext;
import dev.latchkey.spi.LockProvider;
import dev.latchkey.spi.LockUri;
import java.time.Duration;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedDeque;

/**
 * Test backend {@code interposed://NAME}: the {@code mem://NAME} store, where a test can run code
 * right after a command's {@code inspect} answered — to hand the lock to someone else in the window
 * between looking up a holder and acting on it, which no real timing could hit reliably — and whose
 * {@code acquire} can be made to fail with given backend errors.
 */
public final class InterposedLockProvider implements LockProvider {
    private static final Map<String, Runnable> AFTER_INSPECT = new ConcurrentHashMap<>();

    private static final Map<String, Deque<LockBackendException>> ACQUIRE_FAILURES = new ConcurrentHashMap<>();

    /** The next {@code acquire} calls on store {@code name} throw these, one each, before any I/O. */
    static void failNextAcquires(String name, LockBackendException... failures) {
        ACQUIRE_FAILURES.put(name, new ConcurrentLinkedDeque<>(List.of(failures)));
    }

    /** Runs {@code action} once, after the next {@code inspect} on store {@code name} has answered. */
    static void afterNextInspect(String name, Runnable action) {
        AFTER_INSPECT.put(name, action);
    }

    @Override
    public Set<String> schemes() {
        return Set.of("interposed");
    }

    @Override
    public String description() {
        return "test: mem:// with a hook after inspect and failures injected into acquire";
    }

    @Override
    public LockManager open(LockUri uri, LockContext context) {
        String name = uri.host() + uri.path();
        return new Interposed(name, Latchkey.open("mem://" + name, context));
    }

    private record Interposed(String name, LockManager store) implements LockManager {
        @Override
        public Optional<LockInfo> inspect(String key) {
            Optional<LockInfo> seen = store.inspect(key);
            Runnable action = AFTER_INSPECT.remove(name);
            if (action != null) action.run();
            return seen;
        }

        @Override public Optional<Lease> tryAcquire(String key, LeaseOptions options) { return store.tryAcquire(key, options); }
        @Override public Lease acquire(String key, Duration maxWait, LeaseOptions options) {
            Deque<LockBackendException> failures = ACQUIRE_FAILURES.get(name);
            LockBackendException next = failures == null ? null : failures.poll();
            if (next != null) throw next;
            return store.acquire(key, maxWait, options);
        }
        @Override public List<LockInfo> list(String prefix) { return store.list(prefix); }
        @Override public boolean forceRelease(String key) { return store.forceRelease(key); }
        @Override public boolean forceRelease(String key, String leaseId) { return store.forceRelease(key, leaseId); }
        @Override public Set<Capability> capabilities() { return store.capabilities(); }
        @Override public String description() { return "interposed " + store.description(); }
        @Override public void close() { store.close(); }
    }
}
