package dev.latchkey.bench;

import static org.assertj.core.api.Assertions.assertThat;

import dev.latchkey.spi.LockUri;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.StandardOpenOption;
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
                "throughput, floor: ConcurrentHashMap.putIfAbsent+remove",
                "handoff, release in A -> waiter in B holds",
                "handoff, peer: Semaphore(1)",
                "hold 50 leases, heartbeat on");
        assertThat(rows.get(0).samples()).isPositive();
        assertThat(rows.get(2).samples()).isPositive();
        assertThat(rows.get(3).samples()).as("lock rounds under contention").isPositive();
        assertThat(rows.get(4).samples()).as("floor rounds under contention").isPositive();
        assertThat(rows.get(5).samples()).isGreaterThanOrEqualTo(5);
        assertThat(rows.get(6).samples()).isGreaterThanOrEqualTo(5);
        LockBench.Row hold = rows.get(7);
        // heartbeat every TTL/3 for one TTL: each of the 50 leases is due three renewals in the window,
        // counted from the manager's own events; at least one each lands even on a loaded machine
        assertThat(hold.samples()).as("renewals seen by the listener").isGreaterThanOrEqualTo(50);
        assertThat(hold.note())
                .contains("renewed every 1s")
                .contains(" 0 failed, 0 lost")
                .containsPattern("(?<![0-9])50/50 valid")
                // 50 leases cost no more threads than one: the events thread, the timer, two renewers at most
                // (the per-name breakdown counts the JVM's, which includes the earlier phases' idle renewers)
                .containsPattern("threads \\+[0-4] \\(")
                .doesNotContain("dropped events");
        assertThat(text.toString())
                .contains("latchkey bench mem://bench-test")
                .contains("acquire+release, uncontended")
                .contains("floor: ConcurrentHashMap.putIfAbsent+remove")
                .contains("ratio of p50s: acquire+release / floor: ConcurrentHashMap.putIfAbsent+remove = ")
                .contains("ratio of p50s: acquire+release / peer: Semaphore(1) = ")
                .contains("ratio of p50s: handoff / peer: Semaphore(1) handoff = ")
                .contains("ratio of rates: throughput / floor: ConcurrentHashMap.putIfAbsent+remove throughput = ")
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

    @Test
    void fileFloorFindsAByteHeldElsewhereBusy(@TempDir Path dir) throws Exception {
        Baseline floor = Baseline.forScheme("file").get(0);
        assertThat(floor.hasSpread(LockUri.parse("file://" + dir))).isTrue();
        try (Baseline.Session session = floor.open(LockUri.parse("file://" + dir));
             FileChannel other = FileChannel.open(dir.resolve(".latchkey-bench-floor"), StandardOpenOption.WRITE);
             FileLock held = other.lock(5, 1, false)) {
            assertThat(session.tryRound(5)).as("byte 5 is held by another channel of this JVM").isFalse();
            assertThat(session.tryRound(4)).isTrue();
            assertThat(session.tryRound(6)).isTrue();
            held.release();
            assertThat(session.tryRound(5)).as("byte 5 once released").isTrue();
        }
    }
}
