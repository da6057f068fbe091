package dev.latchkey.cli;

import static dev.latchkey.tck.ExternalServer.withParam;
import static org.assertj.core.api.Assertions.assertThat;

import dev.latchkey.spi.LockUri;
import dev.latchkey.tck.ExternalServer;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Named;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * 8 shell loops × 4 read-increment-write rounds under {@code latchkey run}: the counter ends at
 * exactly 32 — on GCS, 8 × 2: it takes about one write per second to one object, and each round
 * writes twice. Eight processes contend at once on every round; more rounds would add JVM starts
 * (most of this test's minutes), not contention.
 */
class CounterRaceIT {
    @TempDir
    static Path locks;

    static Stream<Named<Race>> uris() {
        return uris(locks);
    }

    /**
     * Every backend, on its real server (started by {@code scripts/<name>.sh} unless its env variable
     * names one); {@code file://} under {@code files}.
     */
    static Stream<Named<Race>> uris(Path files) {
        String postgres = ExternalServer.uri("LATCHKEY_TEST_POSTGRES_URI", "postgres");
        String azure = ExternalServer.uri("LATCHKEY_TEST_AZURE_URI", "azurite");
        return Stream.of(
                backend("file://" + files.resolve("file-backend")),
                backend(withParam(postgres, "mode", "advisory")),
                // a schema holds the locks of one mode: lease mode in a schema of its own
                backend(withParam(withParam(postgres, "mode", "lease"), "schema", "latchkey_lease")),
                // a short settle window: 32 acquisitions in a row at the default 1 s would take half a minute
                backend(withParam(ExternalServer.uri("LATCHKEY_TEST_CLICKHOUSE_URI", "clickhouse"), "settle", "100ms")),
                backend(ExternalServer.uri("LATCHKEY_TEST_S3_URI", "s3")),
                backend(ExternalServer.uri("LATCHKEY_TEST_GCS_URI", "gcs"), 2),
                backend(withParam(azure, "mode", "lease")),
                backend(withParam(azure, "mode", "etag")));
    }

    record Race(String uri, int rounds) {}

    private static Named<Race> backend(String uri) {
        return backend(uri, 4);
    }

    /** Names the case by the masked URI: test reports must not show credentials. */
    private static Named<Race> backend(String uri, int rounds) {
        return Named.of(LockUri.parse(uri).toString(), new Race(uri, rounds));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("uris")
    @Timeout(value = 15, unit = TimeUnit.MINUTES) // hang guard only
    void eightProcessesCountExactly(Race race) throws Exception {
        CliCounterRace.Result r = CliCounterRace.run(race.uri(), 8, race.rounds());
        assertThat(r.failures()).isEmpty();
        assertThat(r.counter()).isEqualTo(r.expected()).isEqualTo(8 * race.rounds());
    }
}
