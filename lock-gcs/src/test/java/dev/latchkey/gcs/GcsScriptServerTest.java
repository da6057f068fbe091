package dev.latchkey.gcs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.latchkey.Latchkey;
import dev.latchkey.Lease;
import dev.latchkey.LockManager;
import dev.latchkey.tck.ExternalServer;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * The test server as its own process, the way the CLI's multi-process tests and benchmarks use it:
 * {@code scripts/gcs.sh start} (or {@code $LATCHKEY_TEST_GCS_URI}) gives a URI that two managers
 * share, and the lock excludes across them.
 */
class GcsScriptServerTest {
    @Test
    void scriptStartedServerServesLocks() {
        String uri = ExternalServer.uri(GcsFixture.ENV, "gcs");
        assertThat(uri).startsWith("gs://");
        String key = "script-" + UUID.randomUUID();
        try (LockManager a = Latchkey.open(uri); LockManager b = Latchkey.open(uri)) {
            try (Lease lease = a.tryAcquire(key).orElseThrow()) {
                assertThat(b.tryAcquire(key)).isEmpty();
                assertThat(b.inspect(key)).hasValueSatisfying(i -> assertThat(i.leaseId()).isEqualTo(lease.leaseId()));
            }
            try (Lease next = b.tryAcquire(key).orElseThrow()) {
                assertThat(next.isValid()).isTrue();
            }
        }
    }
}
