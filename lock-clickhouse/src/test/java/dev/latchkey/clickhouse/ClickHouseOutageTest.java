package dev.latchkey.clickhouse;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.latchkey.Latchkey;
import dev.latchkey.Lease;
import dev.latchkey.LeaseLostException;
import dev.latchkey.LeaseOptions;
import dev.latchkey.LockBackendException;
import dev.latchkey.LockManager;
import dev.latchkey.spi.LockUri;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * ClickHouse stopped while a lease is held, on a server of its own (the shared one keeps serving
 * the other tests): calls fail with a clear, retriable {@link LockBackendException}, and the lease
 * turns invalid, firing its lost listeners, before it would have expired.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class ClickHouseOutageTest {

    @Test
    void serverStoppedMidHold() throws Exception {
        ClickHouseTestServer.Private server = ClickHouseTestServer.startPrivate();
        String base = server.uri();
        String uri = base + "?settle=100ms&stale=60s";
        boolean stopped = false;
        try (LockManager m = Latchkey.open(uri)) {
            Duration ttl = Duration.ofSeconds(10);
            Lease lease = m.tryAcquire("nightly-export", LeaseOptions.ttl(ttl).withHeartbeat(Duration.ofMillis(500)))
                    .orElseThrow();
            CompletableFuture<LeaseLostException> lost = new CompletableFuture<>();
            AtomicReference<Instant> expiresAtWhenLost = new AtomicReference<>();
            AtomicReference<Instant> firedAt = new AtomicReference<>();
            lease.onLost(e -> {
                firedAt.set(Instant.now());
                expiresAtWhenLost.set(lease.expiresAt());
                lost.complete(e);
            });
            lease.renew(); // a heartbeat that works, before the outage

            server.stop();
            stopped = true;

            LockUri parsed = LockUri.parse(base);
            String endpoint = parsed.host() + ":" + parsed.port().getAsInt();
            assertThatThrownBy(lease::renew).as("renew while the server is down")
                    .isInstanceOf(LockBackendException.class)
                    .satisfies(e -> assertThat(((LockBackendException) e).isRetriable()).isTrue())
                    .hasMessageContaining(endpoint);
            assertThat(lease.isValid()).as("still valid right after a failed renew: its deadline has not passed").isTrue();
            assertThatThrownBy(() -> m.tryAcquire("other")).isInstanceOf(LockBackendException.class)
                    .hasMessageContaining(endpoint);
            assertThatThrownBy(() -> m.inspect("nightly-export")).isInstanceOf(LockBackendException.class);

            LeaseLostException cause = lost.get(ttl.toSeconds() + 30, TimeUnit.SECONDS);
            assertThat(cause).isNotNull();
            assertThat(firedAt.get()).as("lost listener fired before the lease's expiry").isBefore(expiresAtWhenLost.get());
            assertThat(lease.isValid()).isFalse();
            assertThatThrownBy(lease::renew).isInstanceOf(LeaseLostException.class);
            assertThatThrownBy(lease::release).isInstanceOf(LeaseLostException.class);
        } finally {
            if (!stopped) server.stop();
        }
    }
}
