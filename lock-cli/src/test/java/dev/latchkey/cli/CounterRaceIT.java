package dev.latchkey.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.latchkey.spi.LockUri;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Named;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** 8 shell loops × 25 read-increment-write rounds under {@code latchkey run}: the counter ends at exactly 200. */
class CounterRaceIT {
    @TempDir
    static Path locks;

    /** One backend URI per case. Real servers: {@code dev.latchkey.tck.ExternalServer.uri(envVar, name)}. */
    static Stream<Named<String>> uris() {
        return Stream.of(
                backend("file://" + locks.resolve("file-backend")));
    }

    /** Names the case by the masked URI: test reports must not show credentials. */
    private static Named<String> backend(String uri) {
        return Named.of(LockUri.parse(uri).toString(), uri);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("uris")
    @Timeout(value = 15, unit = TimeUnit.MINUTES) // hang guard only
    void eightProcessesCountToExactly200(String uri) throws Exception {
        CliCounterRace.Result r = CliCounterRace.run(uri, 8, 25);
        assertThat(r.failures()).isEmpty();
        assertThat(r.counter()).isEqualTo(r.expected()).isEqualTo(200);
    }
}
