package dev.latchkey.spi;

import static org.assertj.core.api.Assertions.assertThat;

import dev.latchkey.Latchkey;
import dev.latchkey.Lease;
import dev.latchkey.LeaseOptions;
import dev.latchkey.LockManager;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The README's claim: 10,000 held leases cost the JVM's one timer thread plus the manager's renewers
 * ({@code -Dlatchkey.renewalThreads}, default 2), not a thread each, and all stay valid past their
 * TTL on heartbeats.
 */
class ManyLeasesTest {

    @Test
    void tenThousandHeartbeatingLeasesStayValidOnTheTimerAndTheManagersRenewers() throws Exception {
        int n = 10_000;
        Duration ttl = Duration.ofSeconds(6); // heartbeat every 2 s: generous on a loaded machine
        Heartbeats.scheduler(); // the JVM's one timer, whoever started it
        Set<Thread> before = latchkeyThreads();
        try (LockManager locks = Latchkey.open("mem://many-" + UUID.randomUUID())) {
            List<Lease> leases = new ArrayList<>(n);
            for (int i = 0; i < n; i++) leases.add(locks.tryAcquire("k" + i, LeaseOptions.ttl(ttl)).orElseThrow());
            long start = System.nanoTime();
            TimeUnit.NANOSECONDS.sleep(ttl.toNanos() * 3 / 2 - (System.nanoTime() - start)); // past the TTL

            long valid = leases.stream().filter(Lease::isValid).count();
            Set<Thread> started = latchkeyThreads();
            started.removeAll(before);
            assertThat(valid).as("leases valid 1.5 TTLs after acquiring").isEqualTo(n);
            assertThat(started).as("latchkey threads started for %d held leases of one manager", n)
                    .hasSizeLessThanOrEqualTo(Integer.getInteger("latchkey.renewalThreads", 2))
                    .allMatch(t -> t.getName().startsWith("latchkey-renewer-mem"));
            leases.forEach(Lease::release);
        }
    }

    private static Set<Thread> latchkeyThreads() {
        Set<Thread> out = new HashSet<>();
        for (Thread t : Thread.getAllStackTraces().keySet()) if (t.getName().startsWith("latchkey-")) out.add(t);
        return out;
    }
}
