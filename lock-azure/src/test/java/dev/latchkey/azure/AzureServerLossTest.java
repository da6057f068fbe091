package dev.latchkey.azure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.latchkey.Lease;
import dev.latchkey.LeaseLostException;
import dev.latchkey.LeaseOptions;
import dev.latchkey.LockBackendException;
import dev.latchkey.LockManager;
import dev.latchkey.spi.LockUri;
import dev.latchkey.tck.ExternalServer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A held, heartbeating lease whose Azurite goes away turns invalid a safety margin before the store
 * could let anyone else in, and tells its listeners before that; calls fail with a clear, retriable
 * error. Each run uses an Azurite of its own.
 *
 * <p>The store's expiry is measured, not taken from the library: a {@link RequestTap} records when
 * each write that extends the lease (the acquisition, each renewal) was sent, on the monotonic
 * clock, and whether the server answered it. The store holds the key until at least the send time
 * of the last write that landed plus the TTL (a write arrives after it was sent, and Azure counts
 * from arrival), so the lease must be invalid from that point minus the margin (TTL/5) on.
 */
class AzureServerLossTest {
    private static final Duration TTL = Duration.ofSeconds(15);
    private static final Duration MARGIN = TTL.dividedBy(5);

    @ParameterizedTest(name = "mode={0}")
    @ValueSource(strings = {"lease", "etag"})
    void leaseTurnsInvalidAMarginBeforeTheStoreExpiresItWhenTheServerStops(String mode, @TempDir Path state) throws Exception {
        String uri = Azurite.withMode(ExternalServer.script("azurite", "start", state.toString()), mode);
        String key = LockUri.parse(uri).param("accountKey").orElseThrow();
        String endpoint = LockUri.parse(uri).param("endpoint").orElseThrow();
        // what extends the lease at the store: lease acquire and renew (mode=lease), uploads (mode=etag)
        String[] extending = mode.equals("lease") ? new String[] {"acquire", "renew"} : new String[] {"put"};
        RequestTap tap = new RequestTap();
        try (LockManager m = Azurite.open(uri, tap)) {
            Lease lease = m.tryAcquire("server-loss", LeaseOptions.ttl(TTL)).orElseThrow(); // heartbeat every TTL/3
            CompletableFuture<Long> lostAt = new CompletableFuture<>();
            lease.onLost(e -> lostAt.complete(System.nanoTime()));
            lease.renew();

            ExternalServer.script("azurite", "stop", state.toString()); // returns once the process is gone

            // From the last landed write's send time + TTL - margin on, the lease must not be valid.
            // isValid is read before the tap, so every renewal it counts is among those the tap shows.
            while (true) {
                boolean valid = lease.isValid();
                long now = System.nanoTime();
                long validityMustEnd = tap.lastLanded(extending) + TTL.minus(MARGIN).toNanos();
                if (now - validityMustEnd >= 0) {
                    assertThat(valid).as("valid %d ms after its validity had to end (TTL - margin after the last"
                            + " landed write was sent)", TimeUnit.NANOSECONDS.toMillis(now - validityMustEnd)).isFalse();
                    break;
                }
                LockSupport.parkNanos(validityMustEnd - now);
            }
            long storeExpiresNoEarlierThan = tap.lastLanded(extending) + TTL.toNanos();
            assertThat(lostAt.get(2, TimeUnit.MINUTES) - storeExpiresNoEarlierThan)
                    .as("the lease-lost listener fired before the store could have expired the lease").isNegative();

            assertThat(lease.isValid()).isFalse();
            assertThatThrownBy(lease::renew).isInstanceOf(LeaseLostException.class);
            assertThatThrownBy(() -> m.tryAcquire("server-loss", LeaseOptions.ttl(TTL)))
                    .isInstanceOfSatisfying(LockBackendException.class, e -> {
                        assertThat(e.isRetriable()).as("an unreachable server may come back").isTrue();
                        assertThat(e.getMessage()).contains(endpoint).doesNotContain(key);
                    });
        } finally {
            ExternalServer.script("azurite", "stop", state.toString());
        }
    }
}
