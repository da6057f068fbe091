package dev.latchkey.gcs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import dev.latchkey.Latchkey;
import dev.latchkey.Lease;
import dev.latchkey.LeaseLostException;
import dev.latchkey.LeaseOptions;
import dev.latchkey.LockBackendException;
import dev.latchkey.LockManager;
import dev.latchkey.gcs.testserver.GcsTestServer;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * What a holder sees when GCS goes away: its lease turns invalid and its listeners fire before the
 * lease could expire in the store, and every operation fails with a retriable
 * {@link LockBackendException} naming the endpoint — in seconds, not after minutes of retries.
 */
class GcsOutageTest {
    /** Far above what any call here needs (one refused connection, or two 1 s timeouts). */
    private static final Duration SECONDS = Duration.ofSeconds(30);

    private static String uri(String endpoint) {
        return "gs://outage/locks?endpoint=" + endpoint + "&project=test&timeout=1s";
    }

    @Test
    void serverStoppedMidHoldLeaseTurnsInvalidBeforeExpiry() throws Exception {
        GcsTestServer server = GcsTestServer.start();
        server.createBucket("outage");
        Duration ttl = Duration.ofSeconds(10); // margin TTL/5 = 2 s: room for a slow scheduler on a loaded machine
        try (LockManager m = Latchkey.open(uri(server.endpoint()))) {
            long beforeAcquire = System.nanoTime();
            Lease lease = m.tryAcquire("held", LeaseOptions.ttl(ttl)).orElseThrow(); // heartbeat every ttl/3
            CompletableFuture<Long> lostAt = new CompletableFuture<>();
            lease.onLost(e -> lostAt.complete(System.nanoTime()));
            server.close(); // before the first heartbeat: the store's expiry is acquire-sent + ttl

            long lost = lostAt.get(SECONDS.toSeconds(), TimeUnit.SECONDS);
            assertThat(lease.isValid()).isFalse();
            assertThat(Duration.ofNanos(lost - beforeAcquire))
                    .as("onLost must fire before the lease could expire in the store")
                    .isLessThan(ttl);
            assertThatThrownBy(lease::release).isInstanceOf(LeaseLostException.class);
        } finally {
            server.close();
        }
    }

    @Test
    void operationsOnAStoppedServerFailWithRetriableBackendErrors() {
        GcsTestServer server = GcsTestServer.start();
        server.createBucket("outage");
        String endpoint = server.endpoint();
        try (LockManager m = Latchkey.open(uri(endpoint))) {
            Lease lease = m.tryAcquire("held", LeaseOptions.ttl(Duration.ofMinutes(5)).withoutHeartbeat()).orElseThrow();
            server.close();
            assertTimeoutPreemptively(SECONDS, () -> {
                assertRetriableNaming(endpoint, () -> m.tryAcquire("other"));
                assertRetriableNaming(endpoint, () -> m.inspect("held"));
                assertRetriableNaming(endpoint, () -> m.list(""));
                assertRetriableNaming(endpoint, lease::renew);
                assertRetriableNaming(endpoint, lease::release);
            });
        } finally {
            server.close();
        }
    }

    /** When the manager opens (its probe's first request), and on a request of a manager opened without the probe. */
    @Test
    void aServerThatNeverAnswersTimesOutInSeconds() throws Exception {
        // accepts connections (the kernel's backlog) and never reads or answers a byte
        try (ServerSocket silent = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            String endpoint = "http://127.0.0.1:" + silent.getLocalPort();
            assertTimeoutPreemptively(SECONDS, () -> assertRetriableNaming(endpoint, () -> Latchkey.open(uri(endpoint)).close()));
            try (LockManager m = Latchkey.open(uri(endpoint) + "&probe=false")) {
                assertTimeoutPreemptively(SECONDS, () -> assertRetriableNaming(endpoint, () -> m.tryAcquire("k")));
            }
        }
    }

    private static void assertRetriableNaming(String endpoint, Runnable call) {
        assertThatThrownBy(call::run).isInstanceOfSatisfying(LockBackendException.class, e -> {
            assertThat(e.isRetriable()).as("retriable: %s", e.getMessage()).isTrue();
            assertThat(e.getMessage()).contains(endpoint);
        });
    }
}
