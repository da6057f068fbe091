package dev.latchkey.azure;

import static org.assertj.core.api.Assertions.assertThat;

import com.azure.storage.blob.models.ListBlobsOptions;
import dev.latchkey.Durations;
import dev.latchkey.bench.LockBench;
import dev.latchkey.spi.LockUri;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@code latchkey bench azblob://…} against the real test server, in both modes, measures the lock
 * beside the same floor (two unconditional block-blob uploads) and prints the ratio; the floor's
 * blob is gone afterwards. No timing is asserted.
 */
class AzureBenchFloorTest {
    static final String FLOOR = "floor: 2 unconditional block-blob uploads of " + AzureUploadFloor.RECORD_BYTES + " B";

    @ParameterizedTest(name = "mode={0}")
    @ValueSource(strings = {"lease", "etag"})
    void benchMeasuresTheLockBesideTwoUnconditionalUploads(String mode) throws Exception {
        String uri = Azurite.uri(mode);
        LockUri parsed = LockUri.parse(uri);
        StringWriter text = new StringWriter();
        List<LockBench.Row> rows = LockBench.run(new LockBench.Config(uri, 2, 4, duration("duration", "300ms"),
                duration("warmup", "50ms"), 0, Duration.ofSeconds(3)), new PrintWriter(text));
        System.out.println(text);

        assertThat(rows).extracting(LockBench.Row::name).startsWith("acquire+release, uncontended", FLOOR);
        assertThat(rows.get(0).samples()).isPositive();
        assertThat(rows.get(1).samples()).isPositive();
        assertThat(rows.get(1).note()).contains("same run, no Latchkey");
        assertThat(text.toString()).contains("ratio of p50s: acquire+release / " + FLOOR + " = ")
                .doesNotContain(parsed.param("accountKey").orElse("no key in the URI"));
        String prefix = AzureBlobs.trimSlashes(parsed.path());
        String floorBlobs = (prefix.isEmpty() ? "" : prefix + "/") + ".latchkey-bench-floor";
        assertThat(AzureBlobs.container(parsed, Duration.ofSeconds(30), 2)
                .listBlobs(new ListBlobsOptions().setPrefix(floorBlobs), null))
                .as("the floor deletes its blob on close").isEmpty();
    }

    /** {@code -Dlatchkey.bench.duration=…}/{@code warmup=…} for a real measurement; short by default. */
    private static Duration duration(String what, String otherwise) {
        return Durations.parse(System.getProperty("latchkey.bench." + what, otherwise));
    }
}
