package dev.latchkey.spring;

import dev.latchkey.LockManager;
import org.springframework.boot.actuate.autoconfigure.health.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/**
 * Spring Boot 3's {@code latchkey} health indicator, where Boot 3's Actuator
 * ({@code spring-boot-actuator}'s health API, absent from Boot 4) is on the class path and a
 * {@link LockManager} bean exists; {@code management.health.latchkey.enabled=false} turns it off.
 * Boot 4's is {@link LatchkeyHealthAutoConfiguration}; at most one of the two finds its classes.
 */
@AutoConfiguration(after = LatchkeyAutoConfiguration.class)
@ConditionalOnClass(name = "org.springframework.boot.actuate.health.HealthIndicator") // by name: see LatchkeyAutoConfiguration
@ConditionalOnBean(LockManager.class)
@ConditionalOnEnabledHealthIndicator("latchkey")
public class LatchkeyBoot3HealthAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean(name = "latchkeyHealthIndicator")
    public LatchkeyBoot3HealthIndicator latchkeyHealthIndicator(LockManager locks) {
        return new LatchkeyBoot3HealthIndicator(locks);
    }
}
