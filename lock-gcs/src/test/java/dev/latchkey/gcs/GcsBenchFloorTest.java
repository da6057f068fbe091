package dev.latchkey.gcs;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.cloud.storage.Storage;
import dev.latchkey.Durations;
import dev.latchkey.bench.LockBench;
import dev.latchkey.spi.LockUri;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@code latchkey bench gs://…} against the test server measures the lock beside its floor (two
 * unconditional uploads) and prints the ratio; the floor's object is gone afterwards. No timing is
 * asserted.
 */
class GcsBenchFloorTest {
    static final String FLOOR = "floor: 2 unconditional uploads of " + GcsUploadFloor.RECORD_BYTES + " B";

    @Test
    void benchMeasuresTheLockBesideTwoUnconditionalUploads() throws Exception {
        String uri = GcsFixture.uri();
        LockUri parsed = LockUri.parse(uri);
        StringWriter text = new StringWriter();
        List<LockBench.Row> rows = LockBench.run(new LockBench.Config(uri, 2, 4, duration("duration", "300ms"),
                duration("warmup", "50ms"), 0, Duration.ofSeconds(3)), new PrintWriter(text));
        System.out.println(text);

        assertThat(rows).extracting(LockBench.Row::name).startsWith("acquire+release, uncontended", FLOOR);
        assertThat(rows.get(0).samples()).isPositive();
        assertThat(rows.get(1).samples()).isPositive();
        assertThat(rows.get(1).note()).contains("same run, no Latchkey");
        assertThat(text.toString()).contains("ratio of p50s: acquire+release / " + FLOOR + " = ");
        String prefix = parsed.path().replaceAll("^/+|/+$", "");
        String floorObjects = (prefix.isEmpty() ? "" : prefix + "/") + ".latchkey-bench-floor";
        try (Storage raw = GcsFixture.rawClient(parsed.param("endpoint").orElse(null))) {
            assertThat(raw.list(parsed.host(), Storage.BlobListOption.prefix(floorObjects)).iterateAll())
                    .as("the floor deletes its object on close").isEmpty();
        }
    }

    /** {@code -Dlatchkey.bench.duration=…}/{@code warmup=…} for a real measurement; short by default. */
    private static Duration duration(String what, String otherwise) {
        return Durations.parse(System.getProperty("latchkey.bench." + what, otherwise));
    }
}
