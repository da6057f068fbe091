package dev.latchkey.engine;

import static org.assertj.core.api.Assertions.assertThat;

import dev.latchkey.Lease;
import dev.latchkey.LockInfo;
import dev.latchkey.LockManager;
import dev.latchkey.mem.MemConditionalStore;
import dev.latchkey.spi.ConditionalStore;
import dev.latchkey.spi.HolderLiveness;
import dev.latchkey.spi.LockContext;
import dev.latchkey.spi.StoredRecord;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** The engine's request pattern: what it must read, and the read it may skip. */
class ConditionalStoreLockManagerTest {

    /** A store that counts reads and writes, over a real {@link MemConditionalStore}. */
    private static class Counting implements ConditionalStore {
        final ConditionalStore inner;
        final AtomicInteger reads = new AtomicInteger();
        final AtomicInteger writes = new AtomicInteger();
        /** When set, the next replace lands but reports a miss, like an SDK retry whose first attempt landed. */
        final AtomicBoolean loseNextReplyOfReplace = new AtomicBoolean();

        Counting(ConditionalStore inner) {
            this.inner = inner;
        }

        @Override public Optional<StoredRecord> read(String name) { reads.incrementAndGet(); return inner.read(name); }
        @Override public Optional<String> create(String name, byte[] data) { writes.incrementAndGet(); return inner.create(name, data); }
        @Override public Optional<String> replace(String name, String v, byte[] data) {
            writes.incrementAndGet();
            Optional<String> written = inner.replace(name, v, data);
            return loseNextReplyOfReplace.getAndSet(false) ? Optional.empty() : written;
        }
        @Override public boolean delete(String name, String v) { return inner.delete(name, v); }
        @Override public List<String> list(String prefix) { return inner.list(prefix); }
        @Override public String describe() { return "counting " + inner.describe(); }
        @Override public void close() {}
    }

    /** A counting store that also reports holder liveness, refusing the next {@code attach} when told. */
    private static final class Marking extends Counting implements HolderLiveness {
        final Set<Long> marks = ConcurrentHashMap.newKeySet();
        final AtomicBoolean refuseNextAttach = new AtomicBoolean();

        Marking(ConditionalStore inner) {
            super(inner);
        }

        @Override public boolean attach(String name, long token) { return !refuseNextAttach.getAndSet(false) && marks.add(token); }
        @Override public void detach(String name, long token) { marks.remove(token); }
        @Override public boolean isAlive(String name, long token) { return marks.contains(token); }
    }

    private static LockManager engine(Counting store) {
        return new ConditionalStoreLockManager(store, LockContext.defaults(), Set.of());
    }

    @Test
    void reacquiringItsOwnReleasedKeyIsOneWriteAndNoRead() {
        Counting store = new Counting(MemConditionalStore.named("engine-" + System.nanoTime()));
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
        MemConditionalStore shared = MemConditionalStore.named("engine-" + System.nanoTime());
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

    @Test
    void aRememberedReleaseThatMissesCostsOneReadWhenTheKeyIsHeld() {
        MemConditionalStore shared = MemConditionalStore.named("engine-" + System.nanoTime());
        Counting mine = new Counting(shared);
        try (LockManager a = engine(mine); LockManager b = engine(new Counting(shared))) {
            a.tryAcquire("job").orElseThrow().release();
            Lease theirs = b.tryAcquire("job").orElseThrow();
            mine.reads.set(0);
            mine.writes.set(0);

            assertThat(a.tryAcquire("job")).isEmpty();

            assertThat(mine.writes).as("the write against the remembered version").hasValue(1);
            assertThat(mine.reads).as("one read both rules out our retry and finds the holder").hasValue(1);
            assertThat(theirs.isValid()).isTrue();
            theirs.release();
        }
    }

    @Test
    void aRememberedReleaseThatMissesCostsOneReadWhenTheKeyWasFreedAgain() {
        MemConditionalStore shared = MemConditionalStore.named("engine-" + System.nanoTime());
        Counting mine = new Counting(shared);
        try (LockManager a = engine(mine); LockManager b = engine(new Counting(shared))) {
            a.tryAcquire("job").orElseThrow().release();
            Lease theirs = b.tryAcquire("job").orElseThrow();
            theirs.release();
            mine.reads.set(0);
            mine.writes.set(0);

            Lease again = a.tryAcquire("job").orElseThrow();

            assertThat(mine.reads).as("the read after the miss is the one the takeover writes against").hasValue(1);
            assertThat(mine.writes).as("missed write, then the write that lands").hasValue(2);
            assertThat(again.fencingToken()).isEqualTo(theirs.fencingToken() + 1);
            assertThat(again.isValid()).isTrue();
            again.release();
            assertThat(b.tryAcquire("job")).as("released for real").isPresent();
        }
    }

    @Test
    void aRememberedReleaseWhoseWriteLandedUnseenIsRecognisedByItsOneRead() {
        Counting store = new Counting(MemConditionalStore.named("engine-" + System.nanoTime()));
        try (LockManager a = engine(store); LockManager b = engine(new Counting(store.inner))) {
            Lease first = a.tryAcquire("job").orElseThrow();
            first.release();
            store.reads.set(0);
            store.writes.set(0);
            store.loseNextReplyOfReplace.set(true);

            Lease second = a.tryAcquire("job").orElseThrow();

            assertThat(store.writes).hasValue(1);
            assertThat(store.reads).hasValue(1);
            assertThat(second.fencingToken()).isEqualTo(first.fencingToken() + 1);
            assertThat(b.inspect("job")).get().extracting(LockInfo::leaseId).isEqualTo(second.leaseId());
            assertThat(b.tryAcquire("job")).isEmpty();
            second.release();
        }
    }

    @Test
    void aRememberedReleaseRefusedByLivenessReadsOnceAndTakesTheKey() {
        Marking store = new Marking(MemConditionalStore.named("engine-" + System.nanoTime()));
        try (LockManager a = engine(store)) {
            Lease first = a.tryAcquire("job").orElseThrow();
            first.release();
            store.reads.set(0);
            store.writes.set(0);
            store.refuseNextAttach.set(true);

            Lease second = a.tryAcquire("job").orElseThrow();

            assertThat(store.writes).as("no write without the mark, then one that lands").hasValue(1);
            assertThat(store.reads).as("nothing was read by the unsent write, so attempt reads").hasValue(1);
            assertThat(second.fencingToken()).isEqualTo(first.fencingToken() + 1);
            assertThat(store.marks).containsExactly(second.fencingToken());
            second.release();
            assertThat(store.marks).isEmpty();
        }
    }
}
