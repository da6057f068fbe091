package dev.latchkey.cli;

import static dev.latchkey.cli.InProcessCli.latchkey;
import static org.assertj.core.api.Assertions.assertThat;

import dev.latchkey.Latchkey;
import dev.latchkey.LeaseOptions;
import dev.latchkey.LockManager;
import dev.latchkey.cli.InProcessCli.Result;
import dev.latchkey.tck.ExternalServer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * What the command shows while PostgreSQL's restart guard keeps a key busy: {@code status} and
 * {@code list} name the guard and its end, and {@code run}'s busy line says so instead of "another
 * holder". On a private server (scripts/postgres.sh), so that restarting it disturbs no other test.
 */
class PostgresRestartGuardCliTest {
    private static Path dir;
    private static String uri;

    @BeforeAll
    static void startPrivateServer() throws Exception {
        dir = Files.createTempDirectory("latchkey-cli-postgres-restart-");
        uri = ExternalServer.script("postgres", "start", dir.toString());
    }

    @AfterAll
    static void stopPrivateServer() {
        if (dir != null) ExternalServer.script("postgres", "stop", dir.toString());
    }

    @Test
    void statusListAndTheBusyLineNameTheRestartGuardAndItsEnd() {
        String u = uri + "?schema=cli_guard_" + UUID.randomUUID().toString().substring(0, 8);
        try (LockManager before = Latchkey.open(u)) {
            // a holder before the restart: the guard covers its 60 s TTL, longer than this test
            before.tryAcquire("job", LeaseOptions.ttl(Duration.ofSeconds(60))).orElseThrow().release();
        }
        ExternalServer.script("postgres", "restart", dir.toString());

        Result status = latchkey("status", "--uri", u, "job");
        assertThat(status.status()).as("status: %s", status.err()).isZero();
        Matcher owner = Pattern.compile("(?m)^owner    the restart guard until (\\S+) \\(PostgreSQL started at ").matcher(status.out());
        assertThat(owner.find()).as("status names the guard: %s", status.out()).isTrue();
        String until = owner.group(1);
        assertThat(Instant.parse(until)).isAfter(Instant.now());
        assertThat(status.out()).contains("state    held", "expires  " + until);

        Result list = latchkey("list", "--uri", u);
        assertThat(list.out().lines()).as("list: %s", list.err())
                .anySatisfy(l -> assertThat(l).startsWith("job\tthe restart guard until " + until).endsWith("\t" + until + "\t0"));

        Result busy = latchkey("run", "--uri", u, "--key", "job", "--", "true");
        assertThat(busy.status()).isEqualTo(ExitCodes.BUSY);
        assertThat(busy.errLine()).startsWith("latchkey: lock 'job' is busy: held by the restart guard until " + until);

        Result fresh = latchkey("status", "--uri", u, "never-held");
        assertThat(fresh.out()).contains("state    free");
    }
}
