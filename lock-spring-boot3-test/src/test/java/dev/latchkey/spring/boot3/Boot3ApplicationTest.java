package dev.latchkey.spring.boot3;

import static org.assertj.core.api.Assertions.assertThat;

import dev.latchkey.Latchkey;
import dev.latchkey.Lease;
import dev.latchkey.LockManager;
import dev.latchkey.spring.LatchkeyBoot3HealthIndicator;
import dev.latchkey.spring.LatchkeyLocked;
import dev.latchkey.spring.LatchkeySi6LockRegistry;
import io.micrometer.core.instrument.MeterRegistry;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.Lock;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.SpringBootVersion;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.actuate.health.HealthContributorRegistry;
import org.springframework.boot.actuate.health.HealthIndicator;
import org.springframework.boot.actuate.health.Status;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.integration.support.locks.LockRegistry;
import org.springframework.scheduling.annotation.EnableScheduling;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.scheduling.concurrent.ThreadPoolTaskScheduler;

/**
 * lock-spring in a Spring Boot 3 application (Boot 3.5, Spring Integration 6.5, Boot 3's Actuator),
 * as a user writes one: from {@code latchkey.uri} and {@code latchkey.ttl} it gets a
 * {@link LockManager}, a {@link LockRegistry}, a {@code @Scheduled @LatchkeyLocked} method that runs
 * only while no other holder has its key, Latchkey's meters and the {@code latchkey} health indicator.
 * On {@code file://}: what differs between the Boot lines is class loading and wiring, not the store.
 */
class Boot3ApplicationTest {
    static final String KEY = "boot3-scheduled-job";

    @TempDir
    Path dir;

    @Test
    void twoPropertiesGiveEveryPieceOnBoot3() throws Exception {
        assertThat(SpringBootVersion.getVersion()).startsWith("3.");
        String uri = dir.toUri().toString();
        try (LockManager other = Latchkey.open(uri)) {
            Lease held = other.acquire(KEY, Duration.ofSeconds(30));
            try (ConfigurableApplicationContext app = new SpringApplicationBuilder(App.class).web(WebApplicationType.NONE)
                    .properties("latchkey.uri=" + uri, "latchkey.ttl=3s").run()) {
                Job job = app.getBean(Job.class);
                LockManager locks = app.getBean(LockManager.class);
                assertThat(locks.description()).isEqualTo(other.description());

                // skipped while another holder has the key: attempts go on, no body runs
                await("five scheduled attempts", () -> job.attempts().get() >= 5);
                assertThat(job.bodies().get()).isZero();
                held.release();
                await("the scheduled method ran twice once the key was free", () -> job.bodies().get() >= 2);

                LockRegistry registry = app.getBean(LockRegistry.class);
                assertThat(registry).isInstanceOf(LatchkeySi6LockRegistry.class);
                Lock lock = registry.obtain("boot3-registry-key");
                assertThat(lock.tryLock(10, TimeUnit.SECONDS)).isTrue();
                try {
                    assertThat(other.tryAcquire("boot3-registry-key")).as("another instance is kept out").isEmpty();
                } finally {
                    lock.unlock();
                }
                assertThat(other.tryAcquire("boot3-registry-key")).as("free after unlock").isPresent().get()
                        .satisfies(Lease::release);

                MeterRegistry meters = app.getBean(MeterRegistry.class);
                await("the acquire timer counts the registry's lock", () -> meters.find("latchkey.acquire")
                        .tags("scheme", "file", "outcome", "acquired").timer() != null
                        && meters.find("latchkey.acquire").tags("scheme", "file", "outcome", "acquired").timer().count() >= 3);

                HealthIndicator health = (HealthIndicator) app.getBean(HealthContributorRegistry.class).getContributor("latchkey");
                assertThat(health).isInstanceOf(LatchkeyBoot3HealthIndicator.class);
                assertThat(health.health().getStatus()).isEqualTo(Status.UP);
                assertThat(health.health().getDetails()).containsEntry("backend", other.description());
            }
        }
    }

    private static void await(String what, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) throw new AssertionError("not within 30 s: " + what);
            Thread.sleep(10);
        }
    }

    @SpringBootConfiguration
    @EnableAutoConfiguration
    @EnableScheduling
    static class App {
        @Bean
        Job job() {
            return new Job();
        }

        /** Counts every scheduled attempt, whether the body ran or was skipped. */
        @Bean
        ThreadPoolTaskScheduler taskScheduler(Job job) {
            ThreadPoolTaskScheduler scheduler = new ThreadPoolTaskScheduler();
            scheduler.setTaskDecorator(task -> () -> {
                try {
                    task.run();
                } finally {
                    job.attempts().incrementAndGet();
                }
            });
            return scheduler;
        }
    }

    static class Job {
        private final AtomicInteger attempts = new AtomicInteger();
        private final AtomicInteger bodies = new AtomicInteger();

        /** Methods, not the fields: the bean is a class-based proxy, whose own fields stay unset. */
        public AtomicInteger attempts() {
            return attempts;
        }

        public AtomicInteger bodies() {
            return bodies;
        }

        /** Not void, as lock-spring allows: a skipped call returns false. */
        @Scheduled(fixedDelay = 20)
        @LatchkeyLocked(key = KEY)
        public boolean run() {
            bodies.incrementAndGet();
            return true;
        }
    }
}
