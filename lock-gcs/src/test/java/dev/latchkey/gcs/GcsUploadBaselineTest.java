package dev.latchkey.gcs;

import com.google.cloud.storage.Storage;
import dev.latchkey.bench.BenchRunAssertions;
import dev.latchkey.spi.LockUri;
import org.junit.jupiter.api.Test;

/**
 * {@code latchkey bench gs://…} against the test server measures the lock beside its floor (two
 * unconditional uploads) and prints the ratio; the floor's object is gone afterwards. No timing is
 * asserted.
 */
class GcsUploadBaselineTest {
    static final String FLOOR = "floor: 2 unconditional uploads of " + GcsUploadBaseline.RECORD_BYTES + " B";

    @Test
    void benchMeasuresTheLockBesideTwoUnconditionalUploads() throws Exception {
        String uri = GcsFixture.uri();
        LockUri parsed = LockUri.parse(uri);
        BenchRunAssertions run = BenchRunAssertions.run(uri).measuresFloor(FLOOR);
        try (Storage raw = GcsFixture.rawClient(parsed.param("endpoint").orElse(null))) {
            run.leavesNoFloorObjects(prefix -> raw.list(parsed.host(), Storage.BlobListOption.prefix(prefix)).iterateAll());
        }
    }
}
