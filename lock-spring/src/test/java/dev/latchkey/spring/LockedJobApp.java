package dev.latchkey.spring;

import dev.latchkey.Lease;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.scheduling.annotation.EnableScheduling;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.scheduling.concurrent.ThreadPoolTaskScheduler;

/**
 * A Spring Boot application as a user writes one: auto-configuration, {@code @EnableScheduling} and
 * one {@code @Scheduled @LatchkeyLocked} method. Its scheduler counts every scheduled attempt
 * (whether the body ran or was skipped) and keeps what the scheduled calls threw.
 */
@SpringBootConfiguration
@EnableAutoConfiguration
@EnableScheduling
class LockedJobApp {
    static final String KEY = "spring-scheduled-job";

    /** What the scheduled job did; one per application. */
    static final class Runs {
        final AtomicInteger attempts = new AtomicInteger();
        final AtomicInteger bodies = new AtomicInteger();
        final BlockingQueue<Throwable> errors = new LinkedBlockingQueue<>();
        final AtomicBoolean blockNextRun = new AtomicBoolean();
        final CountDownLatch blocking = new CountDownLatch(1);
        final CountDownLatch interrupted = new CountDownLatch(1);
        volatile Lease lastLease;
    }

    static ConfigurableApplicationContext start(Runs runs, String... properties) {
        return new SpringApplicationBuilder(LockedJobApp.class)
                .web(WebApplicationType.NONE)
                .initializers(c -> c.getBeanFactory().registerSingleton("runs", runs))
                .properties(properties)
                .run();
    }

    @Bean
    ThreadPoolTaskScheduler taskScheduler(Runs runs) {
        ThreadPoolTaskScheduler scheduler = new ThreadPoolTaskScheduler();
        scheduler.setPoolSize(1);
        scheduler.setThreadNamePrefix("locked-job-");
        scheduler.setErrorHandler(runs.errors::add);
        scheduler.setTaskDecorator(task -> () -> {
            try {
                task.run();
            } finally {
                runs.attempts.incrementAndGet();
            }
        });
        return scheduler;
    }

    @Bean
    Job job(Runs runs) {
        return new Job(runs);
    }

    static class Job {
        private final Runs runs;

        Job(Runs runs) {
            this.runs = runs;
        }

        @Scheduled(fixedDelay = 20)
        @LatchkeyLocked(key = KEY)
        public void run() {
            runs.lastLease = LatchkeyLockedRun.currentLease().orElse(null);
            runs.bodies.incrementAndGet();
            if (!runs.blockNextRun.getAndSet(false)) return;
            runs.blocking.countDown();
            try {
                new CountDownLatch(1).await(2, TimeUnit.MINUTES); // nothing counts it down: only an interrupt ends it early
            } catch (InterruptedException e) {
                runs.interrupted.countDown();
                Thread.currentThread().interrupt(); // as a well-behaved method does: the run must not leave it set
            }
        }
    }
}
