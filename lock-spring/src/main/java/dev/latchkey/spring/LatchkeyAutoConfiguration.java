package dev.latchkey.spring;

import dev.latchkey.Latchkey;
import dev.latchkey.LockManager;
import dev.latchkey.micrometer.LatchkeyMetrics;
import dev.latchkey.spi.LockContext;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Switched on by {@code latchkey.uri}: one {@link LockManager} for that URI (closed when the context
 * closes, which stops its heartbeats; held leases then end by release or TTL) and — where Spring
 * Integration is on the class path — a lock registry: {@link LatchkeyLockRegistry} on Spring
 * Integration 7, {@link LatchkeySi6LockRegistry} on 6. An application's own {@code LockManager} bean replaces ours;
 * its own {@link LockContext} bean is the one the manager is opened with. Where {@code lock-micrometer}
 * and Micrometer are on the class path, the manager reports to a {@link LatchkeyMetrics} bean, which
 * Spring Boot's metrics support binds to the application's meter registries like any {@code MeterBinder}.
 */
@AutoConfiguration
@ConditionalOnProperty(prefix = "latchkey", name = "uri")
@EnableConfigurationProperties(LatchkeyProperties.class)
public class LatchkeyAutoConfiguration {
    // class conditions by name, here and in the health auto-configurations: a class literal of the other line's type
    // is dropped, not evaluated, where the configuration class is introspected by reflection (e.g. ApplicationContextRunner)
    private static final String DISTRIBUTED_LOCK = "org.springframework.integration.support.locks.DistributedLock";

    /**
     * Opened with the application's {@link LockContext} bean where there is one (this is where a
     * context carrying listeners, e.g. metrics, reaches the manager), else {@link LockContext#defaults()}.
     */
    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean
    public LockManager latchkeyLockManager(LatchkeyProperties properties, ObjectProvider<LockContext> context) {
        properties.leaseOptions(); // a bad ttl, heartbeat or owner fails here, at start-up
        return Latchkey.open(properties.getUri(), context.getIfAvailable(LockContext::defaults));
    }

    /** Metrics: the manager's listener is fixed when it opens, so the context carrying it is a bean. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = {"dev.latchkey.micrometer.LatchkeyMetrics", "io.micrometer.core.instrument.MeterRegistry"})
    static class MetricsConfiguration {
        @Bean
        @ConditionalOnMissingBean
        LatchkeyMetrics latchkeyMetrics() {
            return new LatchkeyMetrics();
        }

        @Bean
        @ConditionalOnMissingBean
        LockContext latchkeyLockContext(LatchkeyMetrics metrics) {
            return LockContext.defaults().withListener(metrics);
        }
    }

    /** Spring Integration 7 (Boot 4): {@code DistributedLock} exists. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = DISTRIBUTED_LOCK)
    static class LockRegistryConfiguration {
        @Bean
        @ConditionalOnMissingBean
        LatchkeyLockRegistry latchkeyLockRegistry(LockManager locks, LatchkeyProperties properties) {
            return new LatchkeyLockRegistry(locks, properties.leaseOptions());
        }
    }

    /** Spring Integration 6 (Boot 3): a {@code LockRegistry} but no {@code DistributedLock}, which the 7.x registry names. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "org.springframework.integration.support.locks.LockRegistry")
    @ConditionalOnMissingClass(DISTRIBUTED_LOCK)
    static class Si6LockRegistryConfiguration {
        @Bean
        @ConditionalOnMissingBean
        LatchkeySi6LockRegistry latchkeyLockRegistry(LockManager locks, LatchkeyProperties properties) {
            return new LatchkeySi6LockRegistry(locks, properties.leaseOptions());
        }
    }
}
