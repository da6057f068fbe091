package dev.latchkey.spring;

import dev.latchkey.LockManager;
import org.springframework.boot.actuate.health.Health;
import org.springframework.boot.actuate.health.HealthIndicator;

/**
 * Spring Boot 3's {@code latchkey} health indicator (Boot 3 keeps health in
 * {@code spring-boot-actuator}): the same check and details as Boot 4's
 * {@link LatchkeyHealthIndicator}.
 */
public class LatchkeyBoot3HealthIndicator implements HealthIndicator {
    private final LockManager locks;

    public LatchkeyBoot3HealthIndicator(LockManager locks) {
        this.locks = locks;
    }

    @Override
    public Health health() {
        HealthCheck check = HealthCheck.of(locks);
        return (check.up() ? Health.up() : Health.down()).withDetails(check.details()).build();
    }
}
