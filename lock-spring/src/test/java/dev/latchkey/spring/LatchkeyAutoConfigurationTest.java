package dev.latchkey.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.latchkey.Lease;
import dev.latchkey.LeaseLostException;
import dev.latchkey.LockManager;
import dev.latchkey.spi.LockContext;
import dev.latchkey.spi.TimeSource;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.assertj.core.api.InstanceOfAssertFactories;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.context.PropertyPlaceholderAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.integration.support.locks.LockRegistry;

/** What the auto-configuration contributes, and when, in a real (non-web) application context. */
class LatchkeyAutoConfigurationTest {
    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(PropertyPlaceholderAutoConfiguration.class, LatchkeyAutoConfiguration.class,
                    LatchkeyLockedAutoConfiguration.class, LatchkeyHealthAutoConfiguration.class));
    @TempDir
    Path dir;

    private String uri() {
        return "latchkey.uri=" + dir.toUri();
    }

    @Test
    void nothingWithoutAUri() {
        runner.run(c -> {
            assertThat(c).hasNotFailed().doesNotHaveBean(LockManager.class).doesNotHaveBean(LockRegistry.class)
                    .doesNotHaveBean(LatchkeyHealthIndicator.class);
        });
    }

    @Test
    void aUriGivesAManagerARegistryAndHealth() {
        runner.withPropertyValues(uri(), "latchkey.ttl=20s", "latchkey.heartbeat=2s", "latchkey.owner=report-service").run(c -> {
            assertThat(c).hasSingleBean(LockManager.class).hasSingleBean(LatchkeyLockRegistry.class)
                    .hasSingleBean(LatchkeyHealthIndicator.class);
            var options = c.getBean(LatchkeyProperties.class).leaseOptions();
            assertThat(options.ttl()).isEqualTo(Duration.ofSeconds(20));
            assertThat(options.heartbeat()).isEqualTo(Duration.ofSeconds(2));
            var lock = c.getBean(LatchkeyLockRegistry.class).obtain("k");
            lock.lock();
            try {
                assertThat(((LeaseLock) lock).held().ttl()).isEqualTo(Duration.ofSeconds(20));
                assertThat(((LeaseLock) lock).held().owner()).isEqualTo("report-service");
            } finally {
                lock.unlock();
            }
            assertThat(c.getBean(LatchkeyHealthIndicator.class).health().getStatus()).isEqualTo(Status.UP);
        });
    }

    /** With Boot's metrics support present, a lease taken through the registry shows in the application's meter registry. */
    @Test
    void metricsReachTheApplicationsMeterRegistry() {
        runner.withConfiguration(AutoConfigurations.of(MetricsAutoConfiguration.class, SimpleMetricsExportAutoConfiguration.class))
                .withPropertyValues(uri()).run(c -> {
                    MeterRegistry meters = c.getBean(MeterRegistry.class);
                    var lock = c.getBean(LatchkeyLockRegistry.class).obtain("k");
                    lock.lock();
                    // events reach the listener on the manager's event thread, so the meters follow soon
                    Await.until("the held-leases gauge shows the lease",
                            () -> meters.find("latchkey.leases.held").tag("scheme", "file").gauge() != null
                                    && meters.find("latchkey.leases.held").tag("scheme", "file").gauge().value() == 1);
                    lock.unlock();
                    Await.until("the hold timer counts the release", () -> meters.find("latchkey.hold")
                            .tags("scheme", "file", "end", "released").timer() != null
                            && meters.find("latchkey.hold").tags("scheme", "file", "end", "released").timer().count() == 1);
                    assertThat(meters.get("latchkey.acquire").tags("scheme", "file", "outcome", "acquired").timer().count())
                            .isEqualTo(1);
                    assertThat(meters.get("latchkey.leases.held").tag("scheme", "file").gauge().value()).isZero();
                });
    }

    @Test
    void noMetricsListenerWithoutMicrometer() {
        runner.withPropertyValues(uri())
                .withClassLoader(new FilteredClassLoader("io.micrometer", "dev.latchkey.micrometer"))
                .run(c -> assertThat(c).hasNotFailed().hasSingleBean(LockManager.class)
                        .doesNotHaveBean(LockContext.class));
    }

    @Test
    void theManagerIsClosedWithTheContext() {
        LockManager[] seen = new LockManager[1];
        runner.withPropertyValues(uri()).run(c -> seen[0] = c.getBean(LockManager.class));
        assertThatThrownBy(() -> seen[0].tryAcquire("k")).isInstanceOf(IllegalStateException.class).hasMessageContaining("closed");
    }

    @Test
    void noRegistryWithoutSpringIntegrationAndNoHealthWithoutActuator() {
        runner.withPropertyValues(uri())
                .withClassLoader(new FilteredClassLoader("org.springframework.integration", HealthIndicator.class.getPackageName()))
                .run(c -> assertThat(c).hasNotFailed().hasSingleBean(LockManager.class)
                        .doesNotHaveBean(LatchkeyLockRegistry.class).doesNotHaveBean(LatchkeyHealthIndicator.class));
    }

    @Test
    void healthCanBeTurnedOff() {
        runner.withPropertyValues(uri(), "management.health.latchkey.enabled=false")
                .run(c -> assertThat(c).hasSingleBean(LockManager.class).doesNotHaveBean(LatchkeyHealthIndicator.class));
    }

    @Test
    void anApplicationsOwnManagerWins() {
        runner.withPropertyValues(uri()).withUserConfiguration(OwnManager.class)
                .run(c -> assertThat(c.getBean(LockManager.class).description()).startsWith("mem"));
    }

    @Test
    void theManagerIsOpenedWithTheApplicationsLockContext() {
        runner.withPropertyValues(uri()).withBean(LockContext.class,
                () -> LockContext.defaults().withTime(TimeSource.wallClockOffsetBy(Duration.ofDays(1)))).run(c -> {
            try (Lease lease = c.getBean(LockManager.class).acquire("k", Duration.ofSeconds(10))) {
                assertThat(lease.acquiredAt()).as("labelled by the context's wall clock, a day ahead")
                        .isAfter(Instant.now().plus(Duration.ofHours(23)));
            }
        });
    }

    @Test
    void badSettingsFailAtStartUp() {
        runner.withPropertyValues(uri(), "latchkey.ttl=10ms")
                .run(c -> assertThat(c).getFailure().rootCause().hasMessageContaining("ttl must be at least 100ms"));
        runner.withPropertyValues("latchkey.uri=nosuch://x")
                .run(c -> assertThat(c).getFailure().rootCause().hasMessageContaining("no backend for scheme 'nosuch'"));
        runner.withPropertyValues(uri()).withUserConfiguration(PlaceholderJob.Config.class)
                .run(c -> assertThat(c).getFailure().rootCause().hasMessageContaining("job.region"));
        runner.withPropertyValues(uri()).withUserConfiguration(BadTtlJob.class)
                .run(c -> assertThat(c).getFailure().rootCause().hasMessageContaining("soon"));
        runner.withPropertyValues(uri(), "job.hold=-1s").withUserConfiguration(HoldingJob.Config.class)
                .run(c -> assertThat(c).getFailure().hasMessageContaining("HoldingJob.run")
                        .rootCause().hasMessageContaining("holdAtLeast must not be negative"));
        runner.withUserConfiguration(CountingJob.Config.class)
                .run(c -> assertThat(c).getFailure().isInstanceOf(IllegalStateException.class).hasMessageContaining("CountingJob.run")
                        .hasMessageContaining("set latchkey.uri"));
    }

    @Test
    void theAnnotationSkipsTheBodyWhileTheKeyIsHeld() {
        runner.withPropertyValues(uri()).withUserConfiguration(CountingJob.Config.class).run(c -> {
            CountingJob job = c.getBean(CountingJob.class);
            job.run();
            assertThat(job.runs()).isEqualTo(1);
            var lock = c.getBean(LatchkeyLockRegistry.class).obtain("counting-job");
            lock.lock();
            try {
                job.run();
                assertThat(job.runs()).as("skipped while the registry holds the key").isEqualTo(1);
            } finally {
                lock.unlock();
            }
            job.run();
            assertThat(job.runs()).isEqualTo(2);
            assertThat(LatchkeyLockedRun.currentLease()).as("no lease outside a run").isEmpty();
        });
    }

    @Test
    @SuppressWarnings("try") // the lease is held while open; the test calls the job meanwhile
    void placeholdersInKeyAndTtlAreResolvedFromTheEnvironment() {
        runner.withPropertyValues(uri(), "job.region=eu-west", "job.ttl=7s").withUserConfiguration(PlaceholderJob.Config.class).run(c -> {
            PlaceholderJob job = c.getBean(PlaceholderJob.class);
            Lease lease = job.run();
            assertThat(lease.key()).isEqualTo("report-eu-west");
            assertThat(lease.ttl()).isEqualTo(Duration.ofSeconds(7));
            try (Lease held = c.getBean(LockManager.class).acquire("report-eu-west", Duration.ofSeconds(10))) {
                assertThat(job.run()).as("skipped while the resolved key is held").isNull();
            }
        });
    }

    /** A skipped call returns no value of the method's type; a run returns the method's own. */
    @Test
    @SuppressWarnings("try") // the lease is held while open; the test calls the job meanwhile
    void aSkippedCallOfANonVoidMethodReturnsNoValue() {
        runner.withPropertyValues(uri()).withUserConfiguration(ValueJob.Config.class).run(c -> {
            ValueJob job = c.getBean(ValueJob.class);
            assertThat(job.count()).isEqualTo(1);
            assertThat(job.done()).isTrue();
            assertThat(job.name()).isEqualTo("ran");
            assertThat(job.maybe()).contains("ran");
            try (Lease held = c.getBean(LockManager.class).acquire("value-job", Duration.ofSeconds(10))) {
                assertThat(job.count()).isZero();
                assertThat(job.done()).isFalse();
                assertThat(job.name()).isNull();
                assertThat(job.maybe()).isEmpty();
            }
        });
    }

    /** As another instance sees it: the store holds the key for holdAtLeast from the run's start. */
    @Test
    void aRunShorterThanItsHoldAtLeastLeavesTheKeyTakenUntilThen() {
        runner.withPropertyValues(uri(), "job.hold=30s").withUserConfiguration(HoldingJob.Config.class).run(c -> {
            HoldingJob job = c.getBean(HoldingJob.class);
            Instant before = Instant.now();
            assertThat(job.run()).isEqualTo(1);
            Instant after = Instant.now();
            assertThat(job.run()).as("skipped: the key is kept after the run").isZero();
            try (LockManager other = dev.latchkey.Latchkey.open(dir.toUri().toString())) {
                assertThat(other.tryAcquire("holding-job")).as("another instance is kept out").isEmpty();
                // the store's expiry, a second either way for the two clocks' readings
                assertThat(other.inspect("holding-job").orElseThrow().expiresAt())
                        .isBetween(before.plusSeconds(29), after.plusSeconds(31));
            }
        });
        // a hold under the shortest TTL is held that long, then the key frees by itself (another
        // directory: the first one's key stays taken for 30 s, also after its manager has closed)
        runner.withPropertyValues("latchkey.uri=" + dir.resolve("short").toUri(), "job.hold=1ms").withUserConfiguration(HoldingJob.Config.class).run(c -> {
            HoldingJob job = c.getBean(HoldingJob.class);
            assertThat(job.run()).isEqualTo(1);
            Await.until("the key free after its hold", () -> job.run() == 2);
        });
    }

    @Test
    void aCallWhoseLeaseIsBrokenThrowsLeaseLostAndClearsTheInterrupt() {
        runner.withPropertyValues(uri(), "latchkey.ttl=3s").withUserConfiguration(BlockingJob.Config.class).run(c -> {
            BlockingJob job = c.getBean(BlockingJob.class);
            LockManager locks = c.getBean(LockManager.class);
            Thread breaker = new Thread(() -> {
                try {
                    job.blocking().await();
                    locks.forceRelease("blocking-job");
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            breaker.start();
            assertThatThrownBy(job::run)
                    .isInstanceOf(LeaseLostException.class)
                    .satisfies(e -> assertThat(((LeaseLostException) e).reason()).isEqualTo(LeaseLostException.Reason.BROKEN))
                    .satisfies(e -> assertThat(e.getSuppressed()).singleElement(InstanceOfAssertFactories.THROWABLE)
                            .isInstanceOf(IllegalStateException.class).hasMessage("stopped: interrupted"));
            assertThat(Thread.currentThread().isInterrupted()).as("the caller's thread is not left interrupted").isFalse();
            breaker.join();
        });
    }

    /** Blocks until interrupted; then, as a well-behaved method does, keeps the interrupt and gives up. */
    static class BlockingJob {
        private final CountDownLatch blocking = new CountDownLatch(1);

        /** A method, not the field: the bean is a class-based proxy. */
        public CountDownLatch blocking() {
            return blocking;
        }

        @LatchkeyLocked(key = "blocking-job")
        public void run() {
            blocking.countDown();
            try {
                new CountDownLatch(1).await(2, TimeUnit.MINUTES);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("stopped: interrupted", e);
            }
        }

        @Configuration(proxyBeanMethods = false)
        static class Config {
            @Bean
            BlockingJob blockingJob() {
                return new BlockingJob();
            }
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class OwnManager {
        @Bean
        LockManager ownLockManager() {
            return dev.latchkey.Latchkey.open("mem://own");
        }
    }

    static class CountingJob {
        private int runs;

        /** A method, not the field: the bean is a class-based proxy, whose own fields stay unset. */
        public int runs() {
            return runs;
        }

        @LatchkeyLocked(key = "counting-job", ttl = "PT5S")
        public void run() {
            assertThat(LatchkeyLockedRun.currentLease().orElseThrow().ttl()).isEqualTo(Duration.ofSeconds(5));
            runs++;
        }

        @Configuration(proxyBeanMethods = false)
        static class Config {
            @Bean
            CountingJob countingJob() {
                return new CountingJob();
            }
        }
    }

    static class PlaceholderJob {
        @LatchkeyLocked(key = "report-${job.region}", ttl = "${job.ttl}")
        public Lease run() {
            return LatchkeyLockedRun.currentLease().orElseThrow();
        }

        @Configuration(proxyBeanMethods = false)
        static class Config {
            @Bean
            PlaceholderJob placeholderJob() {
                return new PlaceholderJob();
            }
        }
    }

    static class HoldingJob {
        private int runs;

        @LatchkeyLocked(key = "holding-job", holdAtLeast = "${job.hold}")
        public int run() {
            return ++runs;
        }

        @Configuration(proxyBeanMethods = false)
        static class Config {
            @Bean
            HoldingJob holdingJob() {
                return new HoldingJob();
            }
        }
    }

    static class ValueJob {
        @LatchkeyLocked(key = "value-job")
        public int count() {
            return 1;
        }

        @LatchkeyLocked(key = "value-job")
        public boolean done() {
            return true;
        }

        @LatchkeyLocked(key = "value-job")
        public String name() {
            return "ran";
        }

        @LatchkeyLocked(key = "value-job")
        public Optional<String> maybe() {
            return Optional.of("ran");
        }

        @Configuration(proxyBeanMethods = false)
        static class Config {
            @Bean
            ValueJob valueJob() {
                return new ValueJob();
            }
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class BadTtlJob {
        @Bean
        Object badTtlJob() {
            return new Object() {
                @LatchkeyLocked(key = "k", ttl = "soon")
                public void run() {}
            };
        }
    }
}
