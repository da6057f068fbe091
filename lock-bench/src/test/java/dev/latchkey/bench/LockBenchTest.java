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
                Duration.ofMillis(20), 50, Duration.ofSeconds(3)); // a TTL a loaded machine keeps renewed

        List<LockBench.Row> rows = LockBench.run(config, new PrintWriter(text));

        assertThat(rows).extracting(LockBench.Row::name).containsExactly(
                "acquire+release, uncontended",
                "floor: ConcurrentHashMap.putIfAbsent+remove",
                "peer: Semaphore(1)",
                "throughput, tryAcquire+release",
                "handoff, release in A -> waiter in B holds",
                "handoff, peer: Semaphore(1)",
                "hold 50 leases, heartbeat on");
        assertThat(rows.get(0).samples()).isPositive();
        assertThat(rows.get(2).samples()).isPositive();
        assertThat(rows.get(4).samples()).isGreaterThanOrEqualTo(5);
        assertThat(rows.get(5).samples()).isGreaterThanOrEqualTo(5);
        assertThat(rows.get(6).note()).contains("heartbeat threads").containsPattern("(?<![0-9])50/50 valid");
        assertThat(text.toString())
                .contains("latchkey bench mem://bench-test")
                .contains("acquire+release, uncontended")
                .contains("floor: ConcurrentHashMap.putIfAbsent+remove")
                .contains("ratio of p50s: acquire+release / floor: ConcurrentHashMap.putIfAbsent+remove = ")
                .contains("ratio of p50s: acquire+release / peer: Semaphore(1) = ")
                .contains("ratio of p50s: handoff / peer: Semaphore(1) handoff = ")
                .contains("hold 50 leases");
    }

    @Test
    void fileFloorLocksInTheBackendDirectory(@TempDir Path dir) throws Exception {
        Baseline floor = Baseline.forScheme("file").get(0);
        try (Baseline.Session session = floor.open(LockUri.parse("file://" + dir))) {
            for (int i = 0; i < 2; i++) {
                session.acquire();
                session.release();
            }
            assertThat(dir.resolve(".latchkey-bench-floor")).exists();
        }
        assertThat(dir.resolve(".latchkey-bench-floor")).doesNotExist();
    }
}
