package dev.latchkey.spring;

import dev.latchkey.LockManager;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;

/**
 * The {@link LatchkeyLocked @LatchkeyLocked} post-processor, with or without {@code latchkey.uri}:
 * an annotated method in an application without a {@link LockManager} fails the start-up rather
 * than run unlocked.
 */
@AutoConfiguration(after = LatchkeyAutoConfiguration.class)
@EnableConfigurationProperties(LatchkeyProperties.class)
public class LatchkeyLockedAutoConfiguration {

    /**
     * Static, as a post-processor must be: it is created before other beans, so it looks the
     * manager and properties up only when an annotated method first runs.
     */
    @Bean
    public static LatchkeyLockedBeanPostProcessor latchkeyLockedBeanPostProcessor(
            ObjectProvider<LockManager> locks, ObjectProvider<LatchkeyProperties> properties) {
        return new LatchkeyLockedBeanPostProcessor(locks, properties::getObject);
    }
}
