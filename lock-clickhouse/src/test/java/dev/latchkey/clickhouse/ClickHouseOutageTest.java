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
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * ClickHouse stopped while a lease is held, on a server of its own (the shared one keeps serving
 * the other tests): calls fail with a clear, retriable {@link LockBackendException}, and the lease
 * turns invalid, firing its lost listeners, a safety margin before the server would let the lock
 * go. Both ends are measured, not taken from the library: the lease's last confirmed write is a
 * renewal whose send time the test notes on the monotonic clock, and the store's expiry is the row's
 * {@code locked_at + ttl} as the server itself reports it, before it is stopped.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class ClickHouseOutageTest {

    @Test
    void serverStoppedMidHoldEndsTheLeaseAMarginBeforeTheStoresExpiry() throws Exception {
        ClickHouseTestServer.Private server = ClickHouseTestServer.startPrivate();
        String base = server.uri();
        String table = "outage_locks";
        String uri = base + "?table=" + table + "&settle=100ms&stale=60s&timeout=1s";
        boolean stopped = false;
        try (LockManager m = Latchkey.open(uri)) {
            Duration ttl = Duration.ofSeconds(10);
            Duration margin = ttl.dividedBy(5);
            // no heartbeat: the renewal below is known to be the last write that landed
            Lease lease = m.tryAcquire("nightly-export", LeaseOptions.ttl(ttl).withoutHeartbeat()).orElseThrow();
            CompletableFuture<Long> lostAt = new CompletableFuture<>();
            lease.onLost(e -> lostAt.complete(System.nanoTime()));

            long renewalSent = System.nanoTime(); // at or before the renewal's own send time
            lease.renew();
            long asked = System.nanoTime();
            long expiresInMicros = Long.parseLong(ClickHouseTestServer.sql(base,
                    "SELECT toUnixTimestamp64Micro(argMax(locked_at, revision)) + argMax(ttl_ms, revision) * 1000"
                            + " - toUnixTimestamp64Micro(now64(6)) FROM `" + LockUri.parse(base).path().substring(1) + "`.`" + table
                            + "` WHERE lock_id = '" + lease.leaseId() + "'"));
            // the server read its clock after `asked`, so its expiry is at least this late on ours
            long storeExpiresNoEarlierThan = asked + TimeUnit.MICROSECONDS.toNanos(expiresInMicros);

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

            long lost = lostAt.get(ttl.toSeconds() + 30, TimeUnit.SECONDS);
            assertThat(Duration.ofNanos(lost - renewalSent))
                    .as("lost listener after the last confirmed renewal was sent (the store expires no earlier than a TTL after it)")
                    .isLessThan(ttl);
            assertThat(Duration.ofNanos(storeExpiresNoEarlierThan - lost))
                    .as("how long before the store's own expiry (as the server reported it) the lease ended; margin %s", margin)
                    .isGreaterThan(margin.dividedBy(2));
            assertThat(lease.isValid()).isFalse();
            assertThatThrownBy(lease::renew).isInstanceOf(LeaseLostException.class);
            assertThatThrownBy(lease::release).isInstanceOf(LeaseLostException.class);
        } finally {
            if (!stopped) server.stop();
        }
    }
}
