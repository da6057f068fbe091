package dev.latchkey.spring.boot3;

import static org.assertj.core.api.Assertions.assertThat;

import dev.latchkey.LockManager;
import dev.latchkey.spring.LatchkeyLocked;
import java.nio.file.Path;
import java.util.Optional;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.SpringBootVersion;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.util.ClassUtils;

/**
 * A Boot 3 application with lock-spring and neither Spring Integration, nor Actuator, nor Micrometer
 * (the {@code without-optionals} surefire run takes their jars off the class path): it starts, gets
 * its {@link LockManager} and locked methods, and only the registry, health and metrics are off — no
 * {@code NoClassDefFoundError} from Boot 4's or Spring Integration 7's types.
 */
@Tag("without-optionals")
class Boot3WithoutOptionalsTest {
    @TempDir
    Path dir;

    @Test
    void startsWithTheManagerAndLockedMethodsOnly() {
        assertThat(SpringBootVersion.getVersion()).startsWith("3.");
        ClassLoader loader = getClass().getClassLoader();
        assertThat(ClassUtils.isPresent("org.springframework.integration.support.locks.LockRegistry", loader)).isFalse();
        assertThat(ClassUtils.isPresent("org.springframework.boot.actuate.health.HealthIndicator", loader)).isFalse();
        assertThat(ClassUtils.isPresent("io.micrometer.core.instrument.MeterRegistry", loader)).isFalse();
        try (ConfigurableApplicationContext app = new SpringApplicationBuilder(App.class).web(WebApplicationType.NONE)
                .properties("latchkey.uri=" + dir.toUri(), "latchkey.ttl=3s").run()) {
            assertThat(app.getBeansOfType(LockManager.class)).hasSize(1);
            assertThat(app.containsBean("latchkeyLockRegistry")).isFalse();
            assertThat(app.containsBean("latchkeyHealthIndicator")).isFalse();
            assertThat(app.containsBean("latchkeyMetrics")).isFalse();
            assertThat(app.getBean(Job.class).run()).contains("ran");
        }
    }

    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class App {
        @Bean
        Job job() {
            return new Job();
        }
    }

    static class Job {
        @LatchkeyLocked(key = "boot3-plain-job")
        public Optional<String> run() {
            return Optional.of("ran");
        }
    }
}
