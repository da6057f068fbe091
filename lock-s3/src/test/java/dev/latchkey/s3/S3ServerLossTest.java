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
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A held, heartbeating lease whose S3 server goes away turns invalid a safety margin (TTL/5) before
 * the store could let anyone else in, and its listeners fire before the store's expiry; every call
 * then says clearly that the store is unreachable. The times judged are the test's own, on the
 * monotonic clock, around the last renewals that landed — {@link S3HttpFront} between the client
 * and the server logs when it passed each write on and what the server said — not what the library
 * says of itself. Uses a server of its own, so the other tests keep theirs.
 */
class S3ServerLossTest {
    @Test
    void leaseTurnsInvalidAMarginBeforeTheStoreCouldExpireItWhenTheServerStops(@TempDir Path state) throws Exception {
        String serverUri = ExternalServer.script("s3", "start", state.toString());
        Duration ttl = Duration.ofSeconds(10); // heartbeat every TTL/3; margin TTL/5 = 2 s
        Duration margin = ttl.dividedBy(5);
        try (S3HttpFront front = S3HttpFront.before(serverUri); LockManager m = Latchkey.open(front.uri())) {
            String uri = front.uri();
            String secret = LockUri.parse(uri).param("secretAccessKey").orElseThrow();
            String endpoint = LockUri.parse(uri).param("endpoint").orElseThrow();
            Lease lease = m.tryAcquire("server-loss", LeaseOptions.ttl(ttl)).orElseThrow();
            CompletableFuture<Long> lostAt = new CompletableFuture<>();
            CompletableFuture<LeaseLostException> lostCause = new CompletableFuture<>();
            lease.onLost(e -> {
                lostAt.complete(System.nanoTime());
                lostCause.complete(e);
            });
            long renewalSent = System.nanoTime();
            lease.renew(); // landed: the lease counts at least from renewalSent

            ExternalServer.script("s3", "stop", state.toString());
            // From here on nothing reaches the server. Of the writes before, the store counts its
            // expiry from the arrival of the last one that landed — after the front passed it on —
            // and the lease its validity from the send of one it knows landed — before that.
            List<S3HttpFront.ForwardedWrite> writes = front.forwardedWrites();
            long lastLanded = writes.stream().filter(S3HttpFront.ForwardedWrite::landed)
                    .mapToLong(S3HttpFront.ForwardedWrite::receivedNanos).max().orElseThrow();
            long lastMaybeLanded = writes.stream().filter(S3HttpFront.ForwardedWrite::mayHaveLanded)
                    .mapToLong(S3HttpFront.ForwardedWrite::receivedNanos).max().orElseThrow();
            assertThat(lastLanded).as("the explicit renewal is among the landed writes").isGreaterThan(renewalSent);

            TimeUnit.NANOSECONDS.sleep(Math.max(0, lastMaybeLanded + ttl.minus(margin).toNanos() - System.nanoTime()));
            assertThat(lease.isValid()).as("the lease TTL - margin after the last write that may have landed was sent").isFalse();

            long lost = lostAt.get(2, TimeUnit.MINUTES);
            assertThat(Duration.ofNanos(lost - lastLanded))
                    .as("from the last landed write to the loss signal, vs the TTL after which the store lets others in")
                    .isLessThan(ttl);
            assertThat(Duration.ofNanos(lost - renewalSent))
                    .as("from the explicit renewal to the loss signal, vs TTL - margin, before which failing heartbeats must not end the lease")
                    .isGreaterThanOrEqualTo(ttl.minus(margin));
            assertThat(lostCause.get()).hasMessageContaining("server-loss");
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
