package dev.latchkey.gcs;

import dev.latchkey.spi.ConditionalStore;
import dev.latchkey.spi.StoredRecord;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * Clients of one store that keep its {@linkplain ConditionalStore#minWriteInterval() write interval}
 * among themselves, for the compare-and-swap contract, whose clients write one name in turn and race
 * on it: each write of a name waits until the interval has passed since the reply to the last write
 * of that name by any of these clients that landed or may have (empty and false mean "not
 * written"), then goes to the wrapped store unchanged. Racers released together wait for the same
 * instant, so they still race; every answer is the store's own.
 *
 * <p>Why: a GCS object takes one write per second, and the contract writes one name from several
 * clients back to back (a replace right after another client's create; race rounds on one record).
 * Unspaced, those writes get {@code 429} — "not written", a legal answer. The sequential test then
 * fails ("replace with the current version failed") for the rate limit, not for atomicity; and the
 * replace race passes for the wrong reason: the last round's winner waits out its own second while
 * every other racer is refused with 429, so one "wins" without any precondition being raced (seen
 * on the test server: 167 of 175 losers refused by the rate, against none with this spacing).
 */
final class IntervalKeepingClients {
    private final ConcurrentHashMap<String, Long> lastWriteReply = new ConcurrentHashMap<>();

    ConditionalStore wrap(ConditionalStore store) {
        return new ConditionalStore() {
            @Override
            public Optional<StoredRecord> read(String name) {
                return store.read(name);
            }

            @Override
            public Optional<String> create(String name, byte[] data) {
                return spaced(store, name, () -> store.create(name, data), Optional::isPresent);
            }

            @Override
            public Optional<String> replace(String name, String expectedVersion, byte[] data) {
                return spaced(store, name, () -> store.replace(name, expectedVersion, data), Optional::isPresent);
            }

            @Override
            public boolean delete(String name, String expectedVersion) {
                return spaced(store, name, () -> store.delete(name, expectedVersion), deleted -> deleted);
            }

            @Override
            public List<String> list(String namePrefix) {
                return store.list(namePrefix);
            }

            @Override
            public void awaitChange(String name, String version, Duration max) throws InterruptedException {
                store.awaitChange(name, version, max);
            }

            @Override
            public Duration minWriteInterval() {
                return store.minWriteInterval();
            }

            @Override
            public String describe() {
                return store.describe();
            }

            @Override
            public void close() {
                store.close();
            }
        };
    }

    private <T> T spaced(ConditionalStore store, String name, Supplier<T> write, Predicate<T> landed) {
        long interval = store.minWriteInterval().toNanos();
        Long last = lastWriteReply.get(name);
        if (last != null) {
            long wait = last + interval - System.nanoTime();
            if (wait > 0) {
                try {
                    TimeUnit.NANOSECONDS.sleep(wait);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException("interrupted while spacing writes to " + name, e);
                }
            }
        }
        boolean mayHaveLanded = true;
        try {
            T result = write.get();
            mayHaveLanded = landed.test(result);
            return result;
        } finally {
            if (mayHaveLanded) lastWriteReply.merge(name, System.nanoTime(), Math::max);
        }
    }
}
