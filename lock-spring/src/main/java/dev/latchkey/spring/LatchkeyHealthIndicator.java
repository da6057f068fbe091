package dev.latchkey.spring;

import dev.latchkey.LockManager;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;

/**
 * Spring Boot 4's {@code latchkey} health indicator: UP when the store answers a read, DOWN when it
 * does not. Each check is one {@link LockManager#inspect(String)} of {@link #PROBE_KEY}, which holds no
 * lease and changes nothing, so it is safe to call as often as Actuator asks; details are the
 * backend (secrets masked), {@code answeredInMillis}, and when DOWN {@code error} and
 * {@code retriable}. Boot 3's is {@link LatchkeyBoot3HealthIndicator}.
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
        HealthCheck check = HealthCheck.of(locks);
        return (check.up() ? Health.up() : Health.down()).withDetails(check.details()).build();
    }
}
