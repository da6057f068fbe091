package dev.latchkey.example.redis;

import static dev.latchkey.tck.KitRun.assertFailedOn;
import static dev.latchkey.tck.KitRun.failures;

import dev.latchkey.Latchkey;
import dev.latchkey.LockManager;
import dev.latchkey.spi.ConditionalStore;
import dev.latchkey.spi.LockContext;
import dev.latchkey.spi.LockUri;
import dev.latchkey.spi.StoredRecord;
import dev.latchkey.tck.ConditionalStoreContract;
import dev.latchkey.tck.LockManagerContract;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * The kit catches the mistakes an author of this backend could make, on the real server: three
 * variants of the Redis backend, each broken the way a first draft often is, fail the kit on the
 * assertion that names the broken invariant. (Built on {@code dev.latchkey.tck.KitRun}, which runs
 * chosen contract tests in a nested launcher and refuses a skip as proof.)
 *
 * <ul>
 *   <li>a compare-and-set in two commands (read the version, then write): racing writers both win;
 *   <li>versions counted per record, kept in the record: a delete and re-create gives "1" again;
 *   <li>a provider that ignores the {@link LockContext} it is given (clocks, listener).
 * </ul>
 */
class BrokenVariantsTest {

    // The variants are nested, so Surefire (which skips classes with '$') never runs them directly.

    static class TwoCommandCas extends ConditionalStoreContract {
        @Override protected ConditionalStore newStore() {
            return new TwoCommandStore(realStore());
        }

        @Override protected int raceRounds() {
            return 20;
        }
    }

    static class CountedVersionsCas extends ConditionalStoreContract {
        @Override protected ConditionalStore newStore() {
            return new CountedVersionsStore(realStore());
        }
    }

    static class IgnoredContextLocks extends LockManagerContract {
        @Override protected LockManager newManager(LockContext context) {
            return Latchkey.open(RedisServer.uri()); // the context is dropped: the system clocks instead
        }
    }

    @Test
    void aCompareAndSetInTwoCommandsFailsTheKit() {
        Map<String, Throwable> failed = failures(TwoCommandCas.class,
                "racingCreatesHaveExactlyOneWinner", "racingReplacesOfOneVersionHaveExactlyOneWinner");
        assertFailedOn(failed, "racingCreatesHaveExactlyOneWinner", "racing creates that did not have exactly one winner");
        assertFailedOn(failed, "racingReplacesOfOneVersionHaveExactlyOneWinner",
                "racing replaces that did not have exactly one winner");
    }

    @Test
    void versionsThatRestartAfterADeleteFailTheKit() {
        Map<String, Throwable> failed = failures(CountedVersionsCas.class,
                "createReadReplaceDelete", "versionsOfANameNeverRepeat");
        assertFailedOn(failed, "createReadReplaceDelete", "version from before the delete");
        assertFailedOn(failed, "versionsOfANameNeverRepeat", "versions given twice to one name");
    }

    @Test
    void aProviderThatIgnoresItsContextFailsTheKit() {
        Map<String, Throwable> failed = failures(IgnoredContextLocks.class, "managerUsesTheContextItWasGiven");
        assertFailedOn(failed, "managerUsesTheContextItWasGiven", "must build the manager with the context it was given");
    }

    private static RedisConditionalStore realStore() {
        return RedisLockProvider.openStore(LockUri.parse(RedisServer.uri()));
    }

    /**
     * Check, then act: reads the record, compares, then writes with whatever version is there by
     * then — a GET followed by a SET, with a round trip (and here a millisecond) between them.
     */
    static final class TwoCommandStore extends Delegating {
        TwoCommandStore(RedisConditionalStore real) {
            super(real);
        }

        @Override public Optional<String> create(String name, byte[] data) {
            if (real.read(name).isPresent()) return Optional.empty();
            pause();
            return overwrite(name, data);
        }

        @Override public Optional<String> replace(String name, String expectedVersion, byte[] data) {
            Optional<StoredRecord> current = real.read(name);
            if (current.isEmpty() || !current.get().version().equals(expectedVersion)) return Optional.empty();
            pause();
            return overwrite(name, data);
        }

        /** An unconditional write, made of the real store's conditional ones. */
        private Optional<String> overwrite(String name, byte[] data) {
            for (;;) {
                Optional<StoredRecord> now = real.read(name);
                Optional<String> written = now.isEmpty() ? real.create(name, data) : real.replace(name, now.get().version(), data);
                if (written.isPresent()) return written;
            }
        }

        private static void pause() {
            try {
                Thread.sleep(1);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * Atomic writes, but the version is a count of the record's writes kept in the record itself
     * (8 bytes before the data), so a deleted and re-created record starts again at "1".
     */
    static final class CountedVersionsStore extends Delegating {
        CountedVersionsStore(RedisConditionalStore real) {
            super(real);
        }

        @Override public Optional<StoredRecord> read(String name) {
            return real.read(name).map(r -> new StoredRecord(data(r), Long.toString(count(r)), r.age()));
        }

        @Override public Optional<String> create(String name, byte[] data) {
            return real.create(name, counted(1, data)).map(v -> "1");
        }

        @Override public Optional<String> replace(String name, String expectedVersion, byte[] data) {
            Optional<StoredRecord> current = real.read(name);
            if (current.isEmpty() || !Long.toString(count(current.get())).equals(expectedVersion)) return Optional.empty();
            long next = count(current.get()) + 1;
            return real.replace(name, current.get().version(), counted(next, data)).map(v -> Long.toString(next));
        }

        @Override public boolean delete(String name, String expectedVersion) {
            Optional<StoredRecord> current = real.read(name);
            if (current.isEmpty() || !Long.toString(count(current.get())).equals(expectedVersion)) return false;
            return real.delete(name, current.get().version());
        }

        private static byte[] counted(long count, byte[] data) {
            return ByteBuffer.allocate(8 + data.length).putLong(count).put(data).array();
        }

        private static long count(StoredRecord r) {
            return ByteBuffer.wrap(r.data()).getLong();
        }

        private static byte[] data(StoredRecord r) {
            return Arrays.copyOfRange(r.data(), 8, r.data().length);
        }
    }

    /** The real store, for what a variant does not change. */
    abstract static class Delegating implements ConditionalStore {
        final RedisConditionalStore real;

        Delegating(RedisConditionalStore real) {
            this.real = real;
        }

        @Override public Optional<StoredRecord> read(String name) {
            return real.read(name);
        }

        @Override public boolean delete(String name, String expectedVersion) {
            return real.delete(name, expectedVersion);
        }

        @Override public List<String> list(String namePrefix) {
            return real.list(namePrefix);
        }

        @Override public String describe() {
            return "broken variant of " + real.describe();
        }

        @Override public void close() {
            real.close();
        }
    }
}
