package dev.latchkey.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.latchkey.Latchkey;
import dev.latchkey.LeaseLostException;
import dev.latchkey.LockInfo;
import dev.latchkey.LockManager;
import dev.latchkey.spi.LockUri;
import dev.latchkey.tck.ExternalServer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.UUID;
import java.util.regex.Pattern;
import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * The application scenarios on a real PostgreSQL server of this class's own (started by
 * {@code scripts/postgres.sh}, so that stopping it disturbs no other test), and the health
 * indicator going DOWN while that server is stopped and UP again when it is back.
 */
class PostgresSpringApplicationTest extends SpringApplicationScenarios {
    private static Path dir;
    private static String uri;

    @BeforeAll
    static void startServer() throws Exception {
        dir = Files.createTempDirectory("latchkey-spring-postgres-");
        uri = ExternalServer.script("postgres", "start", dir.toString());
    }

    @AfterAll
    static void stopServer() {
        if (dir != null) ExternalServer.script("postgres", "stop", dir.toString());
    }

    @Override
    String uri() {
        return uri;
    }

    /**
     * A restart under a running application shows up where its user looks: the restart guard keeps
     * the scheduled job's key busy for the longest TTL (30 s here), and meanwhile {@code inspect} (what
     * {@code latchkey status} prints) names the guard and its end, the application logs one WARN for the
     * guard and one INFO for the skips however many calls are skipped, and {@code latchkey.store.waits}
     * counts the refusals. A schema of its own, so that the window keeps no other test's keys busy.
     */
    @Test
    void aRestartShowsInStatusTheLogAndAMetric() throws Exception {
        String schemaUri = uri + "?schema=spring_restart_" + UUID.randomUUID().toString().substring(0, 8);
        LockedJobApp.Runs runs = new LockedJobApp.Runs();
        try (ConfigurableApplicationContext app = LockedJobApp.start(runs, "latchkey.uri=" + schemaUri, "latchkey.ttl=30s");
             CapturedLog output = new CapturedLog()) { // after the start, which resets java.util.logging
            Await.until("a run before the restart", () -> runs.bodies.get() >= 1);
            ExternalServer.script("postgres", "restart", dir.toString());

            MeterRegistry meters = app.getBean(MeterRegistry.class);
            Await.until("store waits counted", () -> storeWaits(meters) >= 3);
            String skipLine = "skipped Job.run: '" + LockedJobApp.KEY + "' is held by the restart guard until ";
            Await.until("the skip logged at INFO", () -> output.text().contains(skipLine));
            int bodies = runs.bodies.get();
            int attempts = runs.attempts.get();
            Await.until("more skipped calls", () -> runs.attempts.get() >= attempts + 5);
            assertThat(runs.bodies.get()).as("no run while the guard lasts (30 s)").isEqualTo(bodies);
            assertThat(output.count(skipLine)).as("skip lines").isEqualTo(1);
            assertThat(output.text()).containsPattern("INFO dev\\.latchkey\\.spring\\.LatchkeyLockedInterceptor - .*" + Pattern.quote(skipLine));
            assertThat(output.count("WARNING postgres store wait (restart-guard)")).as("WARNING lines of the guard").isEqualTo(1);

            try (LockManager status = Latchkey.open(schemaUri)) {
                LockInfo guard = status.inspect(LockedJobApp.KEY).orElseThrow();
                assertThat(guard.owner()).startsWith("the restart guard until " + guard.expiresAt());
                assertThat(guard.expiresAt()).isAfter(Instant.now());
            }
            // nothing thrown to the scheduler, but for the loss of the run the restart may have cut short
            // (the job runs every 20 ms): its session ended, and the call says so
            assertThat(runs.errors).as("thrown to the scheduler").hasSizeLessThanOrEqualTo(1)
                    .allSatisfy(e -> assertThat(e).isInstanceOfSatisfying(LeaseLostException.class,
                            lost -> assertThat(lost.reason()).isEqualTo(LeaseLostException.Reason.SESSION_ENDED)));
        }
    }

    private static double storeWaits(MeterRegistry meters) {
        var counter = meters.find("latchkey.store.waits").tags("scheme", "postgres", "reason", "restart-guard").counter();
        return counter == null ? 0 : counter.count();
    }

    /**
     * A wrong password fails every scheduled call: logged as one WARN line naming the cause, without a
     * stack trace, however many calls fail, and nothing is thrown to the scheduler.
     */
    @Test
    void aFailingStoreIsOneLogLinePerCause() {
        String password = LockUri.parse(uri).password().orElseThrow();
        String wrong = uri.replace(":" + password + "@", ":not-" + password + "@");
        assertThat(wrong).isNotEqualTo(uri);
        LockedJobApp.Runs runs = new LockedJobApp.Runs();
        try (CapturedLog output = new CapturedLog();
             ConfigurableApplicationContext app = LockedJobApp.start(runs, "latchkey.uri=" + wrong, "latchkey.ttl=" + TTL)) {
            Await.until("ten failed calls", () -> runs.attempts.get() >= 10);
            String failLine = "skipped Job.run: the lock store failed for '" + LockedJobApp.KEY + "': ";
            assertThat(output.count(failLine)).as("failure lines").isEqualTo(1);
            assertThat(output.text()).containsPattern("WARN dev\\.latchkey\\.spring\\.LatchkeyLockedInterceptor - .*" + Pattern.quote(failLine));
            assertThat(output.text()).contains("password authentication failed").doesNotContain("\tat org.postgresql")
                    .doesNotContain("not-" + password);
            assertThat(runs.bodies.get()).isZero();
            // nothing thrown to the scheduler, but for the loss of the run the restart may have cut short
            // (the job runs every 20 ms): its session ended, and the call says so
            assertThat(runs.errors).as("thrown to the scheduler").hasSizeLessThanOrEqualTo(1)
                    .allSatisfy(e -> assertThat(e).isInstanceOfSatisfying(LeaseLostException.class,
                            lost -> assertThat(lost.reason()).isEqualTo(LeaseLostException.Reason.SESSION_ENDED)));
        }
    }

    @Test
    void healthIsDownWhileTheServerIsStopped() {
        LockedJobApp.Runs runs = new LockedJobApp.Runs();
        try (ConfigurableApplicationContext app = start(uri, runs)) {
            assertThat(health(app).getStatus()).isEqualTo(Status.UP);
            String password = LockUri.parse(uri).password().orElseThrow();

            ExternalServer.script("postgres", "pause", dir.toString());
            try {
                Health down = health(app);
                assertThat(down.getStatus()).isEqualTo(Status.DOWN);
                assertThat(down.getDetails()).containsEntry("retriable", true);
                assertThat(down.getDetails().toString()).contains("127.0.0.1").doesNotContain(password);
            } finally {
                ExternalServer.script("postgres", "resume", dir.toString());
            }
            Await.until("health UP after the server is back", () -> health(app).getStatus().equals(Status.UP));
        }
    }
}
