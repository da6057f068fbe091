package dev.latchkey.s3;

import dev.latchkey.Durations;
import dev.latchkey.Latchkey;
import dev.latchkey.LockManager;
import dev.latchkey.bench.Baseline;
import dev.latchkey.spi.LockNames;
import dev.latchkey.spi.LockUri;
import java.time.Duration;
import java.util.Arrays;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * A measurement, not a test (its name keeps it out of {@code mvn verify}): the lock's uncontended
 * acquire+release (a GetObject and two conditional PutObjects) against {@link S3PutFloor}, and the
 * two conditional PutObjects alone (what acquire+release would cost without the read), interleaved
 * in blocks of ten so that all see the same machine load and the same JIT state
 * ({@code latchkey bench} measures one after the other). Prints p50s and ratios; asserts nothing. Run against a server of your own:
 * <pre>LATCHKEY_TEST_S3_URI=… mvn -o -q -pl lock-s3 test -Dtest=S3FloorRatioHarness -Dlatchkey.bench.duration=20s</pre>
 */
class S3FloorRatioHarness {
    @Test
    void lockBesideTheFloorInterleaved() throws Exception {
        String uri = S3Server.uri();
        Duration duration = Durations.parse(System.getProperty("latchkey.bench.duration", "2s"));
        String key = "latchkey-bench-" + UUID.randomUUID().toString().substring(0, 8) + "/latency";
        String cas = LockNames.encode(key + "-cas");
        try (LockManager locks = Latchkey.open(uri); Baseline.Session floor = new S3PutFloor().open(LockUri.parse(uri));
             S3ConditionalStore store = S3Server.newStore(uri)) {
            String[] version = {store.create(cas, new byte[S3PutFloor.RECORD_BYTES]).orElseThrow()};
            long[][] samples = {new long[1 << 16], new long[1 << 16], new long[1 << 16]};
            int[] counts = new int[3];
            long warmEnd = System.nanoTime() + duration.toNanos() / 4;
            boolean measuring = false;
            long end = Long.MAX_VALUE;
            while (System.nanoTime() < end) {
                if (!measuring && System.nanoTime() >= warmEnd) {
                    measuring = true;
                    end = System.nanoTime() + duration.toNanos();
                }
                for (int side = 0; side < 3; side++) {
                    for (int i = 0; i < 10; i++) {
                        long start = System.nanoTime();
                        if (side == 0) {
                            locks.tryAcquire(key).orElseThrow().release();
                        } else if (side == 1) {
                            floor.acquire();
                            floor.release();
                        } else {
                            for (int w = 0; w < 2; w++) {
                                version[0] = store.replace(cas, version[0], new byte[S3PutFloor.RECORD_BYTES]).orElseThrow();
                            }
                        }
                        if (measuring && counts[side] < samples[side].length) samples[side][counts[side]++] = System.nanoTime() - start;
                    }
                }
            }
            double lock = p50(samples[0], counts[0]);
            double puts = p50(samples[1], counts[1]);
            double conditional = p50(samples[2], counts[2]);
            System.out.printf("interleaved over %s, p50 (samples): acquire+release %.2f ms (%d); %s %.2f ms (%d);"
                    + " 2 conditional PutObject %.2f ms (%d); ratios to the floor: %.2f and %.2f%n",
                    Durations.format(duration), lock, counts[0], new S3PutFloor().description(), puts, counts[1],
                    conditional, counts[2], lock / puts, conditional / puts);
        }
    }

    private static double p50(long[] samples, int n) {
        long[] sorted = Arrays.copyOf(samples, n);
        Arrays.sort(sorted);
        return sorted[n / 2] / 1e6;
    }
}
