package dev.latchkey.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.latchkey.Latchkey;
import dev.latchkey.Lease;
import dev.latchkey.LeaseLostException;
import dev.latchkey.LockManager;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Lock;
import org.junit.jupiter.api.Test;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.integration.support.locks.LockRegistry;

/**
 * What a Spring Boot application gets from {@code latchkey.uri} and {@code latchkey.ttl}, on one
 * backend: a {@link LockManager}, a {@link LockRegistry}, health, Latchkey's meters in the
 * application's registry and a {@code @Scheduled @LatchkeyLocked} method that skips while another holder has its key and is interrupted when its lease is broken.
 * "Another holder" is a second manager on the same URI, as another instance of the application
 * would have.
 */
abstract class SpringApplicationScenarios {
    /** Short, so that a broken lease is noticed within a heartbeat (1 s). */
    static final String TTL = "3s";

    /** The backend's URI; each call may give a fresh store. */
    abstract String uri();

    ConfigurableApplicationContext start(String uri, LockedJobApp.Runs runs) {
        return LockedJobApp.start(runs, "latchkey.uri=" + uri, "latchkey.ttl=" + TTL);
    }

    @Test
    void twoPropertiesGiveAManagerARegistryAndAScheduledMethodThatRuns() throws Exception {
        String uri = uri();
        LockedJobApp.Runs runs = new LockedJobApp.Runs();
        try (ConfigurableApplicationContext app = start(uri, runs); LockManager other = Latchkey.open(uri)) {
            LockManager locks = app.getBean(LockManager.class);
            assertThat(locks.description()).isEqualTo(other.description());

            Lock lock = app.getBean(LockRegistry.class).obtain("spring-registry-key");
            assertThat(lock.tryLock(10, TimeUnit.SECONDS)).isTrue();
            try {
                assertThat(other.tryAcquire("spring-registry-key")).as("another instance is kept out").isEmpty();
                assertThat(((LeaseLock) lock).held().ttl()).isEqualTo(Duration.ofSeconds(3));
            } finally {
                lock.unlock();
            }
            try (Lease afterUnlock = other.acquire("spring-registry-key", Await.SOON)) {
                assertThat(afterUnlock.isValid()).isTrue();
            }

            // runs more than once: each run released its lease, or the next would have been skipped
            Await.until("the scheduled method ran twice", () -> runs.bodies.get() >= 2);
            assertThat(runs.lastLease.key()).isEqualTo(LockedJobApp.KEY);
            assertThat(runs.lastLease.ttl()).isEqualTo(Duration.ofSeconds(3));
            assertThat(runs.errors).isEmpty();
            assertThat(app.getBean(LatchkeyHealthIndicator.class).health().getStatus()).isEqualTo(Status.UP);
            // Boot's metrics support is on the class path: Latchkey's meters reach the application's registry
            MeterRegistry meters = app.getBean(MeterRegistry.class);
            Await.until("the acquire timer counts the registry's lock and the scheduled runs", () -> {
                var acquired = meters.find("latchkey.acquire").tag("outcome", "acquired").timer();
                return acquired != null && acquired.count() >= 3;
            });
        }
    }

    @Test
    @SuppressWarnings("try") // the application runs while open; the test watches its scheduler
    void theScheduledMethodIsSkippedWhileAnotherHolderHasTheKey() throws Exception {
        String uri = uri();
        LockedJobApp.Runs runs = new LockedJobApp.Runs();
        try (LockManager other = Latchkey.open(uri)) {
            Lease held = other.acquire(LockedJobApp.KEY, Await.SOON);
            try (ConfigurableApplicationContext app = start(uri, runs)) {
                Await.until("five scheduled attempts", () -> runs.attempts.get() >= 5);
                assertThat(runs.bodies.get()).as("runs while another holder had the key").isZero();
                assertThat(runs.errors).isEmpty();

                held.release();
                Await.until("a run once the key is free", () -> runs.bodies.get() >= 1);
            }
        }
    }

    @Test
    @SuppressWarnings("try") // the application runs while open; the test watches its scheduler
    void theScheduledMethodIsInterruptedWhenItsLeaseIsBroken() throws Exception {
        String uri = uri();
        LockedJobApp.Runs runs = new LockedJobApp.Runs();
        runs.blockNextRun.set(true);
        try (ConfigurableApplicationContext app = start(uri, runs); LockManager other = Latchkey.open(uri)) {
            assertThat(runs.blocking.await(30, TimeUnit.SECONDS)).as("the run started").isTrue();
            assertThat(other.forceRelease(LockedJobApp.KEY)).isTrue();

            assertThat(runs.interrupted.await(30, TimeUnit.SECONDS)).as("the run was interrupted").isTrue();
            Throwable error = runs.errors.poll(30, TimeUnit.SECONDS);
            assertThat(error).isInstanceOf(LeaseLostException.class);
            assertThat(((LeaseLostException) error).reason()).isIn(LeaseLostException.Reason.BROKEN, LeaseLostException.Reason.SESSION_ENDED);

            // the schedule goes on: the next run takes the key again
            int before = runs.bodies.get();
            Await.until("a run after the broken one", () -> runs.bodies.get() > before);
        }
    }

    /** For subclasses: the health indicator of {@code app}. */
    static Health health(ConfigurableApplicationContext app) {
        return app.getBean(LatchkeyHealthIndicator.class).health();
    }
}
