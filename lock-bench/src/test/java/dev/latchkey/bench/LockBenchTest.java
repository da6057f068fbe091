package dev.latchkey.bench;

import static org.assertj.core.api.Assertions.assertThat;

import dev.latchkey.spi.LockUri;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The bench runs end to end on {@code mem://} and prints every row; no timing is asserted. */
class LockBenchTest {

    @Test
    void printsEveryRowForMem() throws Exception {
        StringWriter text = new StringWriter();
        LockBench.Config config = new LockBench.Config("mem://bench-test", 2, 4, Duration.ofMillis(100),
                Duration.ofMillis(20), 50, Duration.ofMillis(300));

        List<LockBench.Row> rows = LockBench.run(config, new PrintWriter(text));

        assertThat(rows).extracting(LockBench.Row::name).containsExactly(
                "acquire+release, uncontended",
                "floor: ConcurrentHashMap.putIfAbsent+remove",
                "throughput, tryAcquire+release",
                "handoff, release in A -> waiter in B holds",
                "hold 50 leases, heartbeat on");
        assertThat(rows.get(0).samples()).isPositive();
        assertThat(rows.get(3).samples()).isGreaterThanOrEqualTo(5);
        assertThat(rows.get(4).note()).contains("heartbeat threads").contains("/50 valid");
        assertThat(text.toString())
                .contains("latchkey bench mem://bench-test")
                .contains("acquire+release, uncontended")
                .contains("floor: ConcurrentHashMap.putIfAbsent+remove")
                .contains("ratio = latchkey p50 / floor p50 = ")
                .contains("hold 50 leases");
    }

    @Test
    void fileFloorLocksInTheBackendDirectory(@TempDir Path dir) throws Exception {
        Floor floor = Floor.forScheme("file").orElseThrow();
        try (Floor.Op op = floor.open(LockUri.parse("file://" + dir))) {
            op.acquireRelease();
            op.acquireRelease();
            assertThat(dir.resolve(".latchkey-bench-floor")).exists();
        }
        assertThat(dir.resolve(".latchkey-bench-floor")).doesNotExist();
    }
}
