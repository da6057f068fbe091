package dev.latchkey.s3;

import dev.latchkey.bench.BenchRunAssertions;
import dev.latchkey.spi.LockUri;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.s3.S3Client;

/**
 * {@code latchkey bench s3://…} against the real test server measures the lock beside its floor (two
 * unconditional PutObjects) and prints the ratio, not the secret key; the floor's object is gone
 * afterwards. No timing is asserted.
 */
class S3PutBaselineTest {
    static final String FLOOR = "floor: 2 unconditional PutObject of " + S3PutBaseline.RECORD_BYTES + " B";

    @Test
    void benchMeasuresTheLockBesideTwoUnconditionalPuts() throws Exception {
        String uri = S3Server.uri();
        LockUri parsed = LockUri.parse(uri);
        BenchRunAssertions run = BenchRunAssertions.run(uri)
                .measuresFloor(FLOOR)
                .doesNotPrint(parsed.param("secretAccessKey").orElseThrow());
        try (S3Client raw = S3Server.rawClient(uri)) {
            run.leavesNoFloorObjects(prefix -> raw.listObjectsV2Paginator(b -> b.bucket(parsed.host()).prefix(prefix)).contents());
        }
    }
}
