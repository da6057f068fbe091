package dev.latchkey.gcs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.latchkey.Latchkey;
import dev.latchkey.Lease;
import dev.latchkey.LockManager;
import dev.latchkey.tck.ExternalServer;
import java.time.Duration;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * The test server as its own process, the way the CLI's multi-process tests and benchmarks use it:
 * {@code scripts/gcs.sh start} (or {@code $LATCHKEY_TEST_GCS_URI}) gives a URI that two managers
 * share, and the lock excludes across them. The key changes hands by a waiting {@code acquire}: the
 * script's server, like GCS, refuses a write to the record within a second of the release.
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
            try (Lease next = b.acquire(key, Duration.ofSeconds(30))) {
                assertThat(next.isValid()).isTrue();
            }
        }
    }
}
