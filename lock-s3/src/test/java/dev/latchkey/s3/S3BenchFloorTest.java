package dev.latchkey.s3;

import static org.assertj.core.api.Assertions.assertThat;

import dev.latchkey.Durations;
import dev.latchkey.bench.LockBench;
import dev.latchkey.spi.LockUri;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.s3.S3Client;

/**
 * {@code latchkey bench s3://…} against the real test server measures the lock beside its floor (two
 * unconditional PutObjects) and prints the ratio; the floor's object is gone afterwards. No timing
 * is asserted.
 */
class S3BenchFloorTest {
    static final String FLOOR = "floor: 2 unconditional PutObject of " + S3PutFloor.RECORD_BYTES + " B";

    @Test
    void benchMeasuresTheLockBesideTwoUnconditionalPuts() throws Exception {
        String uri = S3Server.uri();
        LockUri parsed = LockUri.parse(uri);
        StringWriter text = new StringWriter();
        List<LockBench.Row> rows = LockBench.run(new LockBench.Config(uri, 2, 4, duration("duration", "300ms"), duration("warmup", "50ms"), 0,
                Duration.ofSeconds(3)), new PrintWriter(text));
        System.out.println(text);

        assertThat(rows).extracting(LockBench.Row::name).startsWith("acquire+release, uncontended", FLOOR);
        assertThat(rows.get(0).samples()).isPositive();
        assertThat(rows.get(1).samples()).isPositive();
        assertThat(rows.get(1).note()).contains("same run, no Latchkey");
        assertThat(text.toString())
                .contains("ratio of p50s: acquire+release / " + FLOOR + " = ")
                .doesNotContain(parsed.param("secretAccessKey").orElseThrow());
        String prefix = parsed.path().replaceAll("^/+|/+$", "");
        String floorObjects = (prefix.isEmpty() ? "" : prefix + "/") + ".latchkey-bench-floor";
        try (S3Client raw = S3Server.rawClient(uri)) {
            assertThat(raw.listObjectsV2Paginator(b -> b.bucket(parsed.host()).prefix(floorObjects)).contents())
                    .as("the floor deletes its object on close").isEmpty();
        }
    }

    /** {@code -Dlatchkey.bench.duration=…}/{@code warmup=…} for a real measurement; short by default. */
    private static Duration duration(String what, String otherwise) {
        return Durations.parse(System.getProperty("latchkey.bench." + what, otherwise));
    }
}
