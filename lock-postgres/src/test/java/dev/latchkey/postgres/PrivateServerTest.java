package dev.latchkey.postgres;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.latchkey.Latchkey;
import dev.latchkey.Lease;
import dev.latchkey.LeaseLostException;
import dev.latchkey.LeaseOptions;
import dev.latchkey.LockBackendException;
import dev.latchkey.LockInfo;
import dev.latchkey.LockManager;
import dev.latchkey.spi.LockUri;
import dev.latchkey.tck.ExternalServer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The server restarts or goes away while leases are held, and a role lacks privileges. Runs on a
 * private server (started by scripts/postgres.sh into a directory of its own) so that restarting
 * it disturbs no other test, and so that the script's unprivileged second role is known to exist.
 */
class PrivateServerTest {
    private static Path dir;
    private static String uri;
    private static String password;
    private static String endpoint;
    private final String tag = "restart-" + UUID.randomUUID().toString().substring(0, 8);

    @BeforeAll
    static void startPrivateServer() throws Exception {
        dir = Files.createTempDirectory("latchkey-postgres-restart-");
        uri = ExternalServer.script("postgres", "start", dir.toString());
        LockUri parsed = LockUri.parse(uri);
        password = parsed.password().orElseThrow();
        endpoint = PgSettings.parse(parsed).endpoint;
    }

    @AfterAll
    static void stopPrivateServer() {
        if (dir != null) ExternalServer.script("postgres", "stop", dir.toString());
    }

    private static void server(String command) {
        ExternalServer.script("postgres", command, dir.toString());
    }

    /** Retries {@code call} a few times; every failure must be a clear, retriable backend error. */
    private static <T> T recovers(Supplier<T> call) {
        LockBackendException last = null;
        for (int attempt = 0; attempt < 3; attempt++) {
            try {
                return call.get();
            } catch (LockBackendException e) {
                assertClear(e);
                last = e;
            }
        }
        throw new AssertionError("still failing after 3 attempts", last);
    }

    private static void assertClear(LockBackendException e) {
        assertThat(e.isRetriable()).as("retriable: %s", e.getMessage()).isTrue();
        assertThat(e.getMessage()).contains(endpoint).doesNotContain(password);
    }

    @Test
    void restartLosesAdvisoryLeasesKeepsLeaseRowsAndServiceResumesWithoutNewClients() throws Exception {
        try (LockManager advisory = Latchkey.open(uri);
             LockManager lease = Latchkey.open(uri + "?mode=lease")) {
            String k = tag + "/job";
            Lease a = advisory.tryAcquire(k, LeaseOptions.ttl(Duration.ofSeconds(3))).orElseThrow();
            CompletableFuture<LeaseLostException> lost = new CompletableFuture<>();
            a.onLost(lost::complete);
            Lease l = lease.tryAcquire(k, LeaseOptions.ttl(Duration.ofSeconds(60)).withoutHeartbeat()).orElseThrow();
            assertThat(advisory.inspect(k)).isPresent(); // leaves an idle pooled connection behind, to go stale
            assertThat(lease.inspect(k)).isPresent();

            server("restart");

            // the advisory lock died with its session: the heartbeat reports the loss
            assertThat(lost.get(30, TimeUnit.SECONDS)).hasMessageContaining("session");
            assertThat(a.isValid()).isFalse();
            Lease a2 = recovers(() -> advisory.tryAcquire(k, LeaseOptions.ttl(Duration.ofSeconds(60)))).orElseThrow();
            assertThat(a2.fencingToken()).as("token after restart").isGreaterThan(a.fencingToken());
            a2.release();

            // the lease row is durable: the same lease renews and releases once the client reconnects
            recovers(() -> {
                l.renew();
                return null;
            });
            assertThat(l.isValid()).isTrue();
            assertThat(lease.inspect(k).map(LockInfo::leaseId)).contains(l.leaseId());
            l.release();
            assertThat(lease.inspect(k)).isEmpty();
        }
    }

    @Test
    void outageGivesRetriableErrorsThenNormalService() throws Exception {
        try (LockManager advisory = Latchkey.open(uri);
             LockManager lease = Latchkey.open(uri + "?mode=lease")) {
            String k = tag + "/outage";
            Lease l = lease.tryAcquire(k, LeaseOptions.ttl(Duration.ofSeconds(60)).withoutHeartbeat()).orElseThrow();
            assertThat(advisory.inspect(k)).isEmpty(); // creates the schema while the server is up

            server("pause");
            try {
                assertThatThrownBy(() -> advisory.tryAcquire(k)).isExactlyInstanceOf(LockBackendException.class)
                        .satisfies(e -> assertClear((LockBackendException) e));
                assertThatThrownBy(l::renew).isExactlyInstanceOf(LockBackendException.class)
                        .satisfies(e -> assertClear((LockBackendException) e));
                assertThat(l.isValid()).as("a lease whose renewal could not reach the store, before its deadline").isTrue();
                assertThatThrownBy(() -> lease.acquire(k + "-other", Duration.ofMillis(200)))
                        .isExactlyInstanceOf(LockBackendException.class)
                        .satisfies(e -> assertClear((LockBackendException) e));
            } finally {
                server("resume");
            }

            l.renew();
            Optional<Lease> a = advisory.tryAcquire(k);
            assertThat(a).isPresent();
            a.get().release();
            l.release();
        }
    }

    @Test
    void missingPrivilegesAreClearNonRetriableErrors() throws Exception {
        String peer = uri.replace("//latchkey:", "//latchkey_peer:");
        try (LockManager owner = Latchkey.open(uri);
             LockManager stranger = Latchkey.open(peer);
             LockManager ownerLeases = Latchkey.open(uri + "?mode=lease");
             LockManager strangerLeases = Latchkey.open(peer + "?mode=lease")) {
            String k = tag + "/guarded";
            Lease held = owner.tryAcquire(k, LeaseOptions.ttl(Duration.ofSeconds(60))).orElseThrow();
            assertThat(ownerLeases.inspect(k)).isEmpty(); // both tables exist, owned by latchkey

            // terminating another role's session needs membership in it or pg_signal_backend
            assertThatThrownBy(() -> stranger.forceRelease(k)).isExactlyInstanceOf(LockBackendException.class)
                    .hasMessageContaining("not permitted to terminate").hasMessageContaining("pg_signal_backend")
                    .hasMessageNotContaining(password)
                    .satisfies(e -> assertThat(((LockBackendException) e).isRetriable()).isFalse());
            assertThat(held.isValid()).isTrue();
            held.renew();

            // no grants on the lease table: refused with the grants to ask for
            assertThatThrownBy(() -> strangerLeases.tryAcquire(k)).isExactlyInstanceOf(LockBackendException.class)
                    .hasMessageContaining("42501").hasMessageContaining("grants").hasMessageNotContaining(password)
                    .satisfies(e -> assertThat(((LockBackendException) e).isRetriable()).isFalse());
            held.release();
        }
    }
}
