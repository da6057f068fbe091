package dev.latchkey.spring;

import dev.latchkey.LockManager;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.context.annotation.Bean;

/**
 * Spring Boot 4's {@code latchkey} health indicator, where Boot 4's health support
 * ({@code spring-boot-health}, part of Actuator) is on the class path and a {@link LockManager} bean
 * exists; {@code management.health.latchkey.enabled=false} turns it off. Boot 3's is
 * {@link LatchkeyBoot3HealthAutoConfiguration}.
 */
@AutoConfiguration(after = LatchkeyAutoConfiguration.class)
@ConditionalOnClass(name = "org.springframework.boot.health.contributor.HealthIndicator") // by name: see LatchkeyAutoConfiguration
@ConditionalOnBean(LockManager.class)
@ConditionalOnEnabledHealthIndicator("latchkey")
public class LatchkeyHealthAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean(name = "latchkeyHealthIndicator")
    public LatchkeyHealthIndicator latchkeyHealthIndicator(LockManager locks) {
        return new LatchkeyHealthIndicator(locks);
    }
}
