package dev.latchkey.azure;

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
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A held, heartbeating lease whose Azurite goes away turns invalid and tells its listeners before
 * its expiry, and calls fail with a clear, retriable error. Each run uses an Azurite of its own.
 */
class AzureServerLossTest {
    @ParameterizedTest(name = "mode={0}")
    @ValueSource(strings = {"lease", "etag"})
    void leaseTurnsInvalidBeforeExpiryWhenTheServerStops(String mode, @TempDir Path state) throws Exception {
        String uri = Azurite.withMode(ExternalServer.script("azurite", "start", state.toString()), mode);
        String key = LockUri.parse(uri).param("accountKey").orElseThrow();
        String endpoint = LockUri.parse(uri).param("endpoint").orElseThrow();
        try (LockManager m = Latchkey.open(uri)) {
            Lease lease = m.tryAcquire("server-loss", LeaseOptions.ttl(Duration.ofSeconds(15))).orElseThrow();
            CompletableFuture<Instant[]> lostAt = new CompletableFuture<>(); // {when, expiresAt then}
            lease.onLost(e -> lostAt.complete(new Instant[] {Instant.now(), lease.expiresAt()}));
            lease.renew();

            ExternalServer.script("azurite", "stop", state.toString());

            // failing heartbeats give up a safety margin (TTL/5, 3 s) before the store's expiry
            Instant[] fired = lostAt.get(2, TimeUnit.MINUTES);
            assertThat(fired[0]).as("when the lease-lost listener fired, vs the lease's expiresAt").isBefore(fired[1]);
            assertThat(lease.isValid()).isFalse();
            assertThatThrownBy(lease::renew).isInstanceOf(LeaseLostException.class);
            assertThatThrownBy(() -> m.tryAcquire("server-loss", LeaseOptions.ttl(Duration.ofSeconds(15))))
                    .isInstanceOfSatisfying(LockBackendException.class, e -> {
                        assertThat(e.isRetriable()).as("an unreachable server may come back").isTrue();
                        assertThat(e.getMessage()).contains(endpoint).doesNotContain(key);
                    });
        } finally {
            ExternalServer.script("azurite", "stop", state.toString());
        }
    }
}
