package dev.latchkey.micrometer;

import static org.assertj.core.api.Assertions.assertThat;

import dev.latchkey.Latchkey;
import dev.latchkey.Lease;
import dev.latchkey.LeaseOptions;
import dev.latchkey.LockManager;
import dev.latchkey.spi.LockContext;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;

/** The meters on a real {@link SimpleMeterRegistry}, fed by a mem:// manager's events. */
class LatchkeyMetricsTest {
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final LatchkeyMetrics metrics = new LatchkeyMetrics();

    @Test
    void acquireHoldLossAndGaugeAreCountedByScheme() throws Exception {
        metrics.bindTo(registry);
        String uri = "mem://metrics-" + System.nanoTime();
        try (LockManager a = Latchkey.open(uri, LockContext.defaults().withListener(metrics));
             LockManager b = Latchkey.open(uri)) {
            Lease first = a.tryAcquire("job").orElseThrow();
            await(() -> gauge() == 1.0, "held-leases gauge at 1");
            assertThat(a.tryAcquire("job")).isEmpty();
            await(() -> timerCount("latchkey.acquire", "outcome", "busy") == 1, "one busy acquire");
            first.release();
            await(() -> timerCount("latchkey.hold", "end", "released") == 1, "one released hold");
            assertThat(gauge()).isEqualTo(0.0);

            a.tryAcquire("job", LeaseOptions.ttl(Duration.ofSeconds(60)).withHeartbeat(Duration.ofMillis(100))).orElseThrow();
            assertThat(b.forceRelease("job")).isTrue();
            await(() -> registry.find("latchkey.lost").tag("scheme", "mem").tag("reason", "BROKEN").counters().stream()
                    .mapToDouble(c -> c.count()).sum() == 1.0, "one loss, reason BROKEN");
            await(() -> timerCount("latchkey.hold", "end", "lost") == 1, "one lost hold");
            assertThat(gauge()).isEqualTo(0.0);
            assertThat(timerCount("latchkey.acquire", "outcome", "acquired")).isEqualTo(2);
        }
        assertThat(registry.getMeters()).as("meters are tagged by scheme and outcome, never by key")
                .allSatisfy(m -> assertThat(m.getId().getTags()).extracting(t -> t.getKey())
                        .contains("scheme").isSubsetOf("scheme", "outcome", "end", "reason"));
    }

    /**
     * A store wait (PostgreSQL's restart guard; its refusals are shown on a real server in
     * lock-postgres's PrivateServerTest and lock-spring's restart test) is counted by scheme and reason.
     */
    @Test
    void storeWaitsAreCountedBySchemeAndReason() {
        metrics.bindTo(registry);
        metrics.storeWait("postgres", "job", "restart-guard", Instant.now());
        metrics.storeWait("postgres", "other", "restart-guard", Instant.now());
        assertThat(registry.find("latchkey.store.waits").tag("scheme", "postgres").tag("reason", "restart-guard")
                .counter().count()).isEqualTo(2.0);
        assertThat(registry.getMeters()).extracting(m -> m.getId().getTags().size()).containsOnly(2);
    }

    /** The held-leases gauge; -1 before the first event registered it. */
    private double gauge() {
        var gauge = registry.find("latchkey.leases.held").tag("scheme", "mem").gauge();
        return gauge == null ? -1 : gauge.value();
    }

    private long timerCount(String name, String tag, String value) {
        return registry.find(name).tag("scheme", "mem").tag(tag, value).timers().stream().mapToLong(t -> t.count()).sum();
    }

    private static void await(BooleanSupplier condition, String what) throws InterruptedException {
        long start = System.nanoTime();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - start > TimeUnit.SECONDS.toNanos(30)) throw new AssertionError("not within 30 s: " + what);
            TimeUnit.MILLISECONDS.sleep(10);
        }
    }
}
