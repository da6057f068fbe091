package dev.latchkey.spring;

import dev.latchkey.LockBackendException;
import dev.latchkey.LockException;
import dev.latchkey.LockManager;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;

/**
 * UP when the store answers a read, DOWN when it does not. Each check is one
 * {@link LockManager#inspect(String)} of {@link #PROBE_KEY}, a key nothing acquires: {@code inspect}
 * is in every backend's core contract (unlike {@code list}, which needs {@code Capability.LIST}),
 * takes no lock and writes nothing, and reaches the store on every backend. A backend error makes
 * the indicator DOWN with its message (which names the endpoint and never a secret) and whether it
 * is retriable; it holds no lease and changes nothing, so it is safe to call as often as Actuator asks.
 */
public class LatchkeyHealthIndicator implements HealthIndicator {
    /** The key read by every check. */
    public static final String PROBE_KEY = "latchkey-health-probe";

    private final LockManager locks;

    public LatchkeyHealthIndicator(LockManager locks) {
        this.locks = locks;
    }

    @Override
    public Health health() {
        long start = System.nanoTime();
        try {
            locks.inspect(PROBE_KEY);
            return Health.up()
                    .withDetail("backend", locks.description())
                    .withDetail("answeredInMillis", (System.nanoTime() - start) / 1_000_000)
                    .build();
        } catch (LockException e) {
            Health.Builder down = Health.down().withDetail("backend", locks.description()).withDetail("error", e.getMessage());
            if (e instanceof LockBackendException backend) down.withDetail("retriable", backend.isRetriable());
            return down.build();
        }
    }
}
