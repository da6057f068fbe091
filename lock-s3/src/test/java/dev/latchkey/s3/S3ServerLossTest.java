package dev.latchkey.s3;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.latchkey.Latchkey;
import dev.latchkey.Lease;
import dev.latchkey.LeaseLostException;
import dev.latchkey.LeaseOptions;
import dev.latchkey.LockBackendException;
import dev.latchkey.LockManager;
import dev.latchkey.spi.LockUri;
import dev.latchkey.tck.ExternalServer;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A held, heartbeating lease whose S3 server goes away turns invalid and tells its listeners before
 * its TTL runs out, and every call says clearly that the store is unreachable. Uses a server of its
 * own, so the other tests keep theirs.
 */
class S3ServerLossTest {
    @Test
    void leaseTurnsInvalidBeforeExpiryWhenTheServerStops(@TempDir Path state) throws Exception {
        String uri = ExternalServer.script("s3", "start", state.toString());
        String secret = LockUri.parse(uri).param("secretAccessKey").orElseThrow();
        String endpoint = LockUri.parse(uri).param("endpoint").orElseThrow();
        Duration ttl = Duration.ofSeconds(10);
        try (LockManager m = Latchkey.open(uri)) {
            Lease lease = m.tryAcquire("server-loss", LeaseOptions.ttl(ttl)).orElseThrow();
            CompletableFuture<Instant[]> lostAt = new CompletableFuture<>(); // {when, expiresAt then}
            CompletableFuture<LeaseLostException> lostCause = new CompletableFuture<>();
            lease.onLost(e -> {
                lostAt.complete(new Instant[] {Instant.now(), lease.expiresAt()});
                lostCause.complete(e);
            });
            lease.renew(); // the server is there: renewals work

            ExternalServer.script("s3", "stop", state.toString());

            // heartbeats failing against the dead server must not run to the end of the TTL: the
            // lease gives up a safety margin (TTL/5, here 2 s) before the store would expire it
            Instant[] fired = lostAt.get(2, TimeUnit.MINUTES);
            assertThat(fired[0]).as("when the lease-lost listener fired, vs the lease's expiresAt").isBefore(fired[1]);
            assertThat(lostCause.get()).hasMessageContaining("server-loss");
            assertThat(lease.isValid()).isFalse();
            assertThatThrownBy(lease::renew).isInstanceOf(LeaseLostException.class);
            assertThatThrownBy(lease::release).isInstanceOf(LeaseLostException.class);
            assertThatThrownBy(() -> m.tryAcquire("server-loss"))
                    .isInstanceOfSatisfying(LockBackendException.class, e -> {
                        assertThat(e.isRetriable()).as("an unreachable server may come back").isTrue();
                        assertThat(e.getMessage()).contains(endpoint).doesNotContain(secret);
                    });
        } finally {
            ExternalServer.script("s3", "stop", state.toString());
        }
    }
}
