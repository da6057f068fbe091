package dev.latchkey.tck;

import static org.assertj.core.api.Assertions.assertThat;

import dev.latchkey.spi.ConditionalStore;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Checks a store whose {@link dev.latchkey.spi.StoredRecord#age() ages} come from the server's
 * clock: an age never exceeds the longest the record can have existed (measured around the write
 * and the read on the local monotonic clock) — an overstated age lets a takeover in early — and
 * lags the shortest by less than {@code lag}. Servers that date in whole seconds get reads 50 ms
 * apart for 1.5 s after each of three writes, so some reads fall early in a second after a write
 * late in one, where an age not rounded down would exceed the true age.
 */
public final class ServerAgeProbe {
    private ServerAgeProbe() {}

    /** Writes three records named {@code prefix-0..2} (fresh names: no write limit per object applies). */
    public static void assertAgesNeverOverstated(ConditionalStore store, String prefix, Duration lag) throws InterruptedException {
        // a warm client, so that the writes measured below are quick and the true age well bounded
        store.create(prefix + "-warm-up", "x".getBytes(StandardCharsets.UTF_8)).orElseThrow();
        store.read(prefix + "-warm-up").orElseThrow();
        List<String> wrong = new ArrayList<>();
        int reads = 0;
        for (int w = 0; w < 3; w++) {
            String name = prefix + "-" + w;
            long writeSent = System.nanoTime();
            store.create(name, "x".getBytes(StandardCharsets.UTF_8)).orElseThrow();
            long writeDone = System.nanoTime();
            while (System.nanoTime() - writeDone < TimeUnit.MILLISECONDS.toNanos(1500)) {
                long readSent = System.nanoTime();
                Duration age = store.read(name).orElseThrow().age();
                long readDone = System.nanoTime();
                reads++;
                Duration atMost = Duration.ofNanos(readDone - writeSent);
                Duration atLeast = Duration.ofNanos(readSent - writeDone);
                if (age == null || age.compareTo(atMost) > 0 || age.compareTo(atLeast.minus(lag)) <= 0) {
                    wrong.add(name + ": age " + age + ", true age between " + atLeast + " and " + atMost);
                }
                TimeUnit.MILLISECONDS.sleep(50); // spacing of reads across the server's clock ticks
            }
        }
        assertThat(reads).as("reads made").isGreaterThan(30);
        assertThat(wrong).as("reads whose age overstated the true age, or lagged it by %s or more", lag).isEmpty();
    }
}
