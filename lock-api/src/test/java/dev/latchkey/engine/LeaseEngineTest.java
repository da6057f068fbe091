package dev.latchkey.engine;

import static org.assertj.core.api.Assertions.assertThat;

import dev.latchkey.Lease;
import dev.latchkey.LockManager;
import dev.latchkey.mem.MemStore;
import dev.latchkey.spi.ConditionalStore;
import dev.latchkey.spi.LockContext;
import dev.latchkey.spi.StoredRecord;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** The engine's request pattern: what it must read, and the read it may skip. */
class LeaseEngineTest {

    /** A store that counts reads and writes, over a real {@link MemStore}. */
    private static final class Counting implements ConditionalStore {
        final ConditionalStore inner;
        final AtomicInteger reads = new AtomicInteger();
        final AtomicInteger writes = new AtomicInteger();

        Counting(ConditionalStore inner) {
            this.inner = inner;
        }

        @Override public Optional<StoredRecord> read(String name) { reads.incrementAndGet(); return inner.read(name); }
        @Override public Optional<String> create(String name, byte[] data) { writes.incrementAndGet(); return inner.create(name, data); }
        @Override public Optional<String> replace(String name, String v, byte[] data) { writes.incrementAndGet(); return inner.replace(name, v, data); }
        @Override public boolean delete(String name, String v) { return inner.delete(name, v); }
        @Override public List<String> list(String prefix) { return inner.list(prefix); }
        @Override public String describe() { return "counting " + inner.describe(); }
        @Override public void close() {}
    }

    private static LockManager engine(Counting store) {
        return new LeaseEngine(store, LockContext.defaults(), Set.of());
    }

    @Test
    void reacquiringItsOwnReleasedKeyIsOneWriteAndNoRead() {
        Counting store = new Counting(MemStore.named("engine-" + System.nanoTime()));
        try (LockManager locks = engine(store)) {
            Lease first = locks.tryAcquire("job").orElseThrow();
            first.release();
            store.reads.set(0);
            store.writes.set(0);

            Lease second = locks.tryAcquire("job").orElseThrow();

            assertThat(store.reads).hasValue(0);
            assertThat(store.writes).hasValue(1);
            assertThat(second.fencingToken()).isEqualTo(first.fencingToken() + 1);
            second.release();
        }
    }

    @Test
    void aKeyWrittenByOthersSinceIsReadAgainAndNeverTakenFromItsHolder() {
        MemStore shared = MemStore.named("engine-" + System.nanoTime());
        Counting mine = new Counting(shared);
        try (LockManager a = engine(mine); LockManager b = engine(new Counting(shared))) {
            Lease first = a.tryAcquire("job").orElseThrow();
            first.release();
            Lease theirs = b.tryAcquire("job").orElseThrow();

            assertThat(a.tryAcquire("job")).as("held by b: the remembered release is out of date").isEmpty();
            assertThat(theirs.isValid()).isTrue();
            theirs.release();

            Lease again = a.tryAcquire("job").orElseThrow();
            assertThat(again.fencingToken()).isEqualTo(theirs.fencingToken() + 1);
            again.release();
        }
    }
}
