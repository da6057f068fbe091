package dev.latchkey.azure;

import com.azure.storage.blob.models.ListBlobsOptions;
import dev.latchkey.bench.BenchRunAssertions;
import dev.latchkey.spi.LockUri;
import java.time.Duration;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@code latchkey bench azblob://…} against the real test server, in both modes, measures the lock
 * beside the same floor (two unconditional block-blob uploads) and prints the ratio, not the account
 * key; the floor's blob is gone afterwards. No timing is asserted.
 */
class AzureUploadBaselineTest {
    static final String FLOOR = "floor: 2 unconditional block-blob uploads of " + AzureUploadBaseline.RECORD_BYTES + " B";

    @ParameterizedTest(name = "mode={0}")
    @ValueSource(strings = {"lease", "etag"})
    void benchMeasuresTheLockBesideTwoUnconditionalUploads(String mode) throws Exception {
        String uri = Azurite.uri(mode);
        LockUri parsed = LockUri.parse(uri);
        BenchRunAssertions.run(uri)
                .measuresFloor(FLOOR)
                .doesNotPrint(parsed.param("accountKey").orElse("no key in the URI"))
                .leavesNoFloorObjects(prefix -> AzureStoreFactory.container(parsed, Duration.ofSeconds(30), 2)
                        .listBlobs(new ListBlobsOptions().setPrefix(prefix), null));
    }
}
