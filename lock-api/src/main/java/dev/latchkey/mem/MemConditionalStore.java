package dev.latchkey.mem;

import dev.latchkey.spi.ConditionalStore;
import dev.latchkey.spi.StoredRecord;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The reference {@link ConditionalStore}: records in a {@link ConcurrentHashMap} of this JVM, each
 * write an atomic {@code compute} on its name, versions from one global counter (never reused), age
 * from this JVM's monotonic clock. Stores are shared by name, so every {@code mem://NAME} manager of
 * the JVM sees the same locks. Waiters are woken on every write ({@link #awaitChange}).
 */
public final class MemConditionalStore implements ConditionalStore {
    private static final ConcurrentHashMap<String, MemConditionalStore> NAMED = new ConcurrentHashMap<>();
    private static final AtomicLong VERSIONS = new AtomicLong();

    private record Entry(byte[] data, String version, long writtenNanos) {}

    private final String name;
    private final ConcurrentHashMap<String, Entry> entries = new ConcurrentHashMap<>();
    /** Waiters sleep on {@link #changed}: a lock, not a monitor, so a waiting virtual thread does not pin its carrier. */
    private final ReentrantLock changes = new ReentrantLock();
    private final Condition changed = changes.newCondition();
    private final AtomicInteger waiters = new AtomicInteger();

    private MemConditionalStore(String name) {
        this.name = name;
    }

    /** The JVM-wide store called {@code name}. */
    public static MemConditionalStore named(String name) {
        return NAMED.computeIfAbsent(Objects.requireNonNull(name, "name"), MemConditionalStore::new);
    }

    @Override
    public Optional<StoredRecord> read(String key) {
        Entry e = entries.get(key);
        if (e == null) return Optional.empty();
        return Optional.of(new StoredRecord(e.data().clone(), e.version(), Duration.ofNanos(System.nanoTime() - e.writtenNanos())));
    }

    @Override
    public Optional<String> create(String key, byte[] data) {
        Entry fresh = entry(data);
        boolean won = entries.putIfAbsent(key, fresh) == null;
        return won ? written(fresh) : Optional.empty();
    }

    @Override
    public Optional<String> replace(String key, String expectedVersion, byte[] data) {
        Entry fresh = entry(data);
        Entry after = entries.computeIfPresent(key, (k, cur) -> cur.version().equals(expectedVersion) ? fresh : cur);
        return after == fresh ? written(fresh) : Optional.empty();
    }

    @Override
    public boolean delete(String key, String expectedVersion) {
        boolean[] removed = {false};
        entries.computeIfPresent(key, (k, cur) -> {
            if (!cur.version().equals(expectedVersion)) return cur;
            removed[0] = true;
            return null;
        });
        if (removed[0]) signal();
        return removed[0];
    }

    @Override
    public List<String> list(String prefix) {
        List<String> out = new ArrayList<>();
        for (String k : entries.keySet()) if (k.startsWith(prefix)) out.add(k);
        return out;
    }

    @Override
    public void awaitChange(String key, String version, Duration max) throws InterruptedException {
        long deadline = System.nanoTime() + max.toNanos();
        waiters.incrementAndGet();
        try {
            changes.lock();
            try {
                while (true) {
                    Entry e = entries.get(key);
                    String now = e == null ? null : e.version();
                    if (!Objects.equals(now, version)) return;
                    long left = deadline - System.nanoTime();
                    if (left <= 0) return;
                    changed.awaitNanos(left);
                }
            } finally {
                changes.unlock();
            }
        } finally {
            waiters.decrementAndGet();
        }
    }

    @Override
    public String describe() {
        return "mem://" + name;
    }

    /** Named stores live as long as the JVM; closing a manager leaves the locks to others. */
    @Override
    public void close() {}

    private static Entry entry(byte[] data) {
        return new Entry(data.clone(), Long.toString(VERSIONS.incrementAndGet()), System.nanoTime());
    }

    private Optional<String> written(Entry e) {
        signal();
        return Optional.of(e.version());
    }

    private void signal() {
        if (waiters.get() > 0) {
            changes.lock();
            try {
                changed.signalAll();
            } finally {
                changes.unlock();
            }
        }
    }
}
