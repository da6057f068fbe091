package dev.latchkey.postgres.advisory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.latchkey.Latchkey;
import dev.latchkey.Lease;
import dev.latchkey.LeaseOptions;
import dev.latchkey.LockBackendException;
import dev.latchkey.LockInfo;
import dev.latchkey.LockManager;
import dev.latchkey.LockTimeoutException;
import dev.latchkey.postgres.shared.PgTestSupport;
import dev.latchkey.spi.LockUri;
import dev.latchkey.tck.CriticalSectionChecker;
import dev.latchkey.tck.ExternalServer;
import dev.latchkey.tck.FaultProxy;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Both modes behind PgBouncer 1.18 ({@code scripts/pgbouncer.sh}, in front of the test server): with
 * transaction pooling one server session serves every client (pool_size 1), which is exactly what a
 * session lock cannot survive; with session pooling each client keeps its own.
 */
class PgBouncerTest {
    private static Path dir;
    /** Transaction pooling, pool_size 1. */
    private static String transactionPooled;
    /** Session pooling. */
    private static String sessionPooled;
    private final String tag = "bouncer-" + UUID.randomUUID().toString().substring(0, 8);
    private final List<LockManager> managers = new ArrayList<>();

    @BeforeAll
    static void startPgBouncer() throws Exception {
        dir = Files.createTempDirectory("latchkey-pgbouncer-");
        transactionPooled = ExternalServer.script("pgbouncer", "start", dir.toString(), PgTestSupport.uri());
        sessionPooled = transactionPooled + "_session";
    }

    @AfterAll
    static void stopPgBouncer() {
        if (dir != null) ExternalServer.script("pgbouncer", "stop", dir.toString());
    }

    private LockManager open(String uri) {
        LockManager m = Latchkey.open(uri);
        managers.add(m);
        return m;
    }

    @AfterEach
    void closeManagers() {
        managers.forEach(LockManager::close);
    }

    /** Two clients through transaction pooling used to both hold one key (a session lock on a shared server session). */
    @Test
    void advisoryModeThroughTransactionPoolingIsRefusedSoNoTwoClientsHoldOneKey() throws Exception {
        LockManager first = open(PgTestSupport.with(transactionPooled, "prepareThreshold=0"));
        LockManager second = open(PgTestSupport.with(transactionPooled, "prepareThreshold=0"));
        String key = tag + "/shared-session";
        for (LockManager m : List.of(first, second)) {
            assertThatThrownBy(() -> m.tryAcquire(key, LeaseOptions.ttl(Duration.ofSeconds(60))))
                    .isExactlyInstanceOf(LockBackendException.class)
                    .hasMessageContaining("shares server sessions").hasMessageContaining("mode=lease")
                    .hasMessageContaining("pool_mode=session")
                    .satisfies(e -> assertThat(((LockBackendException) e).isRetriable()).isFalse());
        }
        try (Connection admin = PgTestSupport.jdbc(PgTestSupport.uri());
             PreparedStatement ps = admin.prepareStatement("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'"
                     + " AND objsubid = 1 AND ((classid::int8 << 32) | objid::int8) = ?")) {
            ps.setLong(1, AdvisoryLockManager.lockId("public", key));
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                assertThat(rs.getInt(1)).as("advisory locks on '%s' left on the server", key).isZero();
            }
        }
    }

    /**
     * A renewal whose reply comes three timeouts late through session pooling (replies held between
     * PgBouncer and the holder): PgBouncer keeps the server session, so the key stays the holder's,
     * as it does on a direct connection ({@link AdvisorySlowReplyTest}).
     */
    @Test
    void aReplyLaterThanTheTimeoutThroughSessionPoolingKeepsTheLock() throws Exception {
        LockUri bouncer = LockUri.parse(sessionPooled);
        try (FaultProxy proxy = FaultProxy.start(bouncer.host(), bouncer.port().orElse(6432))) {
            Duration timeout = Duration.ofSeconds(1);
            LockManager holder = open(PgTestSupport.with(proxy.rewrite(sessionPooled), "timeout=" + timeout.toMillis() + "ms"));
            LockManager contender = open(PgTestSupport.uri());
            String key = tag + "/late-reply";
            LeaseOptions options = LeaseOptions.ttl(Duration.ofSeconds(10)).withoutHeartbeat();
            Lease lease = holder.tryAcquire(key, options).orElseThrow();

            proxy.stall(FaultProxy.Direction.SERVER_TO_CLIENT);
            CompletableFuture<Void> renewal = CompletableFuture.runAsync(lease::renew);
            assertThatThrownBy(() -> contender.acquire(key, timeout.multipliedBy(3), options))
                    .as("the contender, while the holder's renewal waits for its reply")
                    .isExactlyInstanceOf(LockTimeoutException.class);
            proxy.heal();
            renewal.get(30, TimeUnit.SECONDS);
            assertThat(lease.isValid()).isTrue();
            assertThat(contender.tryAcquire(key, options)).as("the key, after the late renewal landed").isEmpty();
            lease.release();
            contender.tryAcquire(key, options).orElseThrow().release();
        }
    }

    @Test
    void advisoryModeThroughSessionPoolingHoldsExcludesAndHandsOff() throws Exception {
        LockManager a = open(sessionPooled);
        LockManager b = open(sessionPooled);
        LockManager direct = open(PgTestSupport.uri());
        String key = tag + "/own-session";
        Lease held = a.tryAcquire(key, LeaseOptions.ttl(Duration.ofSeconds(60))).orElseThrow();
        assertThat(b.tryAcquire(key)).isEmpty();
        assertThat(direct.tryAcquire(key)).as("a direct client of the same database").isEmpty();

        CompletableFuture<Lease> waiter = CompletableFuture.supplyAsync(
                () -> b.acquire(key, Duration.ofSeconds(30), LeaseOptions.ttl(Duration.ofSeconds(60))));
        held.renew();
        held.release();
        Lease next = waiter.get(60, TimeUnit.SECONDS);
        assertThat(next.fencingToken()).isGreaterThan(held.fencingToken());
        assertThat(direct.inspect(key).map(LockInfo::leaseId)).contains(next.leaseId());
        next.release();
        assertThat(direct.inspect(key)).isEmpty();
    }

    @Test
    void leaseModeThroughTransactionPoolingKeepsCriticalSectionsApart() throws Exception {
        String uri = PgTestSupport.with(transactionPooled, PgTestSupport.LEASE + "&prepareThreshold=0&poll=20ms");
        String key = tag + "/contended";
        CriticalSectionChecker checker = new CriticalSectionChecker();
        List<CompletableFuture<Void>> workers = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            LockManager m = open(uri);
            workers.add(CompletableFuture.runAsync(() -> {
                for (int round = 0; round < 10; round++) {
                    try (Lease l = m.acquire(key, Duration.ofSeconds(60), LeaseOptions.ttl(Duration.ofSeconds(30)))) {
                        checker.section(l.fencingToken());
                    }
                }
            }));
        }
        for (CompletableFuture<Void> w : workers) w.get(3, TimeUnit.MINUTES);
        assertThat(checker.overlaps()).as(checker.summary()).isZero();
        assertThat(checker.sections()).isEqualTo(30);
        assertThat(checker.tokenOrderViolations()).isEmpty();
    }
}
