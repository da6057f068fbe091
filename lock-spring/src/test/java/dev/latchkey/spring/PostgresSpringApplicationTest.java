package dev.latchkey.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.latchkey.spi.LockUri;
import dev.latchkey.tck.ExternalServer;
import java.nio.file.Files;
import java.nio.file.Path;
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
