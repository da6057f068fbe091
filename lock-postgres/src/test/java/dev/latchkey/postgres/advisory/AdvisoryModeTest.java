package dev.latchkey.postgres.advisory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.latchkey.Capability;
import dev.latchkey.Lease;
import dev.latchkey.LeaseLostException;
import dev.latchkey.LeaseOptions;
import dev.latchkey.LockBackendException;
import dev.latchkey.LockInfo;
import dev.latchkey.LockManager;
import dev.latchkey.postgres.shared.PgSettings;
import dev.latchkey.postgres.shared.PgTestSupport;
import dev.latchkey.spi.LockContext;
import dev.latchkey.spi.LockUri;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** mode=advisory beyond the TCK: session death, hash collisions, the holder table, schema creation. */
class AdvisoryModeTest {
    private final String tag = "adv-" + UUID.randomUUID().toString().substring(0, 8);
    private final List<LockManager> managers = new ArrayList<>();

    private LockManager manager() {
        LockManager m = PgTestSupport.open("");
        managers.add(m);
        return m;
    }

    private AdvisoryLockManager managerWithHash(long fixedId, String params) {
        PgSettings s = PgSettings.parse(LockUri.parse(PgTestSupport.with(PgTestSupport.uri(), params)));
        AdvisoryLockManager m = new AdvisoryLockManager(s, LockContext.defaults(), k -> fixedId);
        managers.add(m);
        return m;
    }

    @AfterEach
    void closeManagers() {
        managers.forEach(LockManager::close);
    }

    @Test
    void declaresSessionSemantics() {
        assertThat(manager().capabilities()).containsExactlyInAnyOrder(Capability.FENCING_TOKENS, Capability.LIST,
                Capability.NATIVE_WAIT, Capability.HOLDER_DEATH_DETECTION);
    }

    @Test
    void keyHashIsStableSha256PrefixAndEachSchemaIsALockSpaceOfItsOwn() {
        // first 8 bytes of SHA-256("abc") = ba7816bf 8f01cfea: schema public keeps the mapping of earlier versions
        assertThat(AdvisoryLockManager.lockId("public", "abc")).isEqualTo(0xba7816bf8f01cfeaL);
        // first 8 bytes of SHA-256("ops" 0x00 "abc") = a548ec96 95bbf0b5
        assertThat(AdvisoryLockManager.lockId("ops", "abc")).isEqualTo(0xa548ec9695bbf0b5L);
    }

    /**
     * An administrator's pg_terminate_backend frees the lock at once (that window is inherent, as for
     * any force release); the broken holder learns it from what the server sent on the idle session.
     * The TTL is 5 minutes: the first heartbeat comes after 100 s and the deadline after 240 s, so only
     * the session watch can fire the listener within the 60 s allowed.
     */
    @Test
    void terminatedSessionLosesTheLeaseAtOnceNotAtTheNextHeartbeat() throws Exception {
        LockManager a = manager();
        LockManager b = manager();
        String key = tag + "/victim";
        Lease lease = a.tryAcquire(key, LeaseOptions.ttl(Duration.ofMinutes(5)).withOwner("victim")).orElseThrow();
        CompletableFuture<LeaseLostException> lost = new CompletableFuture<>();
        AtomicLong lostAt = new AtomicLong();
        lease.onLost(e -> {
            lostAt.set(System.nanoTime());
            lost.complete(e);
        });

        long terminated;
        try (Connection admin = PgTestSupport.jdbc(PgTestSupport.uri());
             PreparedStatement ps = admin.prepareStatement(
                     "SELECT pg_terminate_backend(pid, 5000) FROM latchkey_advisory WHERE key = ?")) {
            ps.setString(1, key);
            try (ResultSet rs = ps.executeQuery()) {
                assertThat(rs.next()).isTrue();
                assertThat(rs.getBoolean(1)).as("session terminated").isTrue();
            }
            terminated = System.nanoTime();
        }
        // the server freed the lock with the session: another client gets it while the lease's TTL still runs
        Lease next = b.tryAcquire(key, LeaseOptions.ttl(Duration.ofSeconds(60)).withOwner("next")).orElseThrow();
        assertThat(next.fencingToken()).isGreaterThan(lease.fencingToken());

        LeaseLostException cause = lost.get(60, TimeUnit.SECONDS);
        assertThat(cause.reason()).isEqualTo(LeaseLostException.Reason.SESSION_ENDED);
        assertThat(cause).hasMessageContaining("administrator command");
        System.out.printf("terminated holder learnt it after %d ms%n", TimeUnit.NANOSECONDS.toMillis(lostAt.get() - terminated));
        assertThat(lease.isValid()).isFalse();
        assertThatThrownBy(lease::release).isInstanceOf(LeaseLostException.class);
        assertThat(b.inspect(key).map(LockInfo::leaseId)).contains(next.leaseId());
        next.release();
    }

    /** forceRelease(key, leaseId) finds the holder by its lease, whatever ApplicationName either manager has. */
    @Test
    void forceReleaseOfALeaseIdFindsItsHolderWhateverItsApplicationName() throws Exception {
        LockManager holder = PgTestSupport.open("ApplicationName=holder-" + tag);
        LockManager breaker = PgTestSupport.open("ApplicationName=ops-console");
        managers.add(holder);
        managers.add(breaker);
        String key = tag + "/by-lease-id";
        Lease lease = holder.tryAcquire(key, LeaseOptions.ttl(Duration.ofMinutes(5))).orElseThrow();
        CompletableFuture<LeaseLostException> lost = new CompletableFuture<>();
        lease.onLost(lost::complete);

        assertThat(breaker.forceRelease(key, UUID.randomUUID().toString())).as("another lease id").isFalse();
        assertThat(lease.isValid()).isTrue();
        assertThat(breaker.forceRelease(key, lease.leaseId())).as("the holder's lease id").isTrue();
        assertThat(lost.get(60, TimeUnit.SECONDS).reason()).isEqualTo(LeaseLostException.Reason.SESSION_ENDED);
        breaker.tryAcquire(key).orElseThrow().release();
    }

    @Test
    void inspectNamesOwnerTokenAndMetadataFromTheHolderTable() {
        LockManager a = manager();
        LockManager b = manager();
        String key = tag + "/inspect";
        Lease lease = a.tryAcquire(key, LeaseOptions.ttl(Duration.ofSeconds(60)).withOwner("nightly-export")
                .withMetadata(Map.of("job", "export", "host", "build-7"))).orElseThrow();
        LockInfo info = b.inspect(key).orElseThrow();
        assertThat(info.owner()).isEqualTo("nightly-export");
        assertThat(info.leaseId()).isEqualTo(lease.leaseId());
        assertThat(info.fencingToken()).isEqualTo(lease.fencingToken()).isPositive();
        assertThat(info.metadata()).containsExactlyInAnyOrderEntriesOf(Map.of("job", "export", "host", "build-7"));
        assertThat(b.list(tag + "/")).extracting(LockInfo::key).containsExactly(key);
        lease.release();
        assertThat(b.inspect(key)).isEmpty();
        assertThat(b.list(tag + "/")).isEmpty();
    }

    /**
     * {@code expiresAt} moves with each renewal: it used to stay at acquisition + TTL, so
     * {@code latchkey status} showed a live, renewed lock as expired.
     */
    @ParameterizedTest(name = "params \"{0}\"")
    @ValueSource(strings = {"", "fencing=false"})
    void inspectShowsAnExpiryThatMovesWithRenewals(String params) {
        LockManager a = PgTestSupport.open(params);
        managers.add(a);
        LockManager b = manager();
        String key = tag + "/renewed";
        Lease lease = a.tryAcquire(key, LeaseOptions.ttl(Duration.ofSeconds(60)).withoutHeartbeat()).orElseThrow();
        LockInfo before = b.inspect(key).orElseThrow();
        lease.renew();
        LockInfo after = b.inspect(key).orElseThrow();
        assertThat(after.leaseId()).isEqualTo(lease.leaseId());
        assertThat(after.acquiredAt()).isEqualTo(before.acquiredAt());
        assertThat(after.expiresAt()).as("expiry after the renewal").isAfter(before.expiresAt());
        lease.release();
    }

    /** With {@code fencing=false} the re-taken first key is held without a row write: still detected. */
    @ParameterizedTest(name = "params \"{0}\"")
    @ValueSource(strings = {"", "fencing=false"})
    void collidingKeysAreDetectedNeverShared(String params) throws Exception {
        long id = UUID.randomUUID().getMostSignificantBits(); // fresh id: earlier runs recorded other keys
        AdvisoryLockManager a = managerWithHash(id, params);
        AdvisoryLockManager b = managerWithHash(id, params);
        String first = tag + "/first";
        String second = tag + "/second";
        a.tryAcquire(first, LeaseOptions.ttl(Duration.ofSeconds(60))).orElseThrow().release();
        Lease lease = a.tryAcquire(first, LeaseOptions.ttl(Duration.ofSeconds(60))).orElseThrow();
        assertThatThrownBy(() -> a.tryAcquire(second)).as("the holder's own manager, other key")
                .isExactlyInstanceOf(LockBackendException.class).hasMessageContaining("collision");

        // while the first key is held (the lock id is taken) ...
        assertThatThrownBy(() -> b.tryAcquire(second))
                .isExactlyInstanceOf(LockBackendException.class)
                .hasMessageContaining("collision").hasMessageContaining(first).hasMessageContaining(second)
                .satisfies(e -> assertThat(((LockBackendException) e).isRetriable()).isFalse());
        lease.release();
        // ... and while it is free (the id is recorded for the first key for good)
        assertThatThrownBy(() -> b.tryAcquire(second)).isExactlyInstanceOf(LockBackendException.class)
                .hasMessageContaining("collision");
        assertThatThrownBy(() -> b.acquire(second, Duration.ofSeconds(5))).isExactlyInstanceOf(LockBackendException.class)
                .hasMessageContaining("collision");
        // the refused attempts left the id free for its rightful key
        try (Lease again = b.tryAcquire(first).orElseThrow()) {
            assertThat(again.isValid()).isTrue();
        }
    }

    @ParameterizedTest(name = "params \"{0}\"")
    @ValueSource(strings = {"", "fencing=false"})
    void refusedCollisionLeavesNoLockBehind(String params) throws Exception {
        long id = UUID.randomUUID().getMostSignificantBits();
        AdvisoryLockManager a = managerWithHash(id, params);
        a.tryAcquire(tag + "/owner-of-id").orElseThrow().release();
        assertThatThrownBy(() -> a.tryAcquire(tag + "/intruder")).isInstanceOf(LockBackendException.class);
        try (Connection admin = PgTestSupport.jdbc(PgTestSupport.uri());
             PreparedStatement ps = admin.prepareStatement("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'"
                     + " AND objsubid = 1 AND ((classid::int8 << 32) | objid::int8) = ?")) {
            ps.setLong(1, id);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                assertThat(rs.getInt(1)).as("advisory locks left on the colliding id").isZero();
            }
        }
    }

    @Test
    void schemaCreationIsSafeWhenManyManagersStartAtOnce() throws Exception {
        String table = "lk_race_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
        String advisorySchema = table + "_a";
        String leaseSchema = table + "_l";
        int n = 6;
        List<CompletableFuture<Long>> starts = new ArrayList<>();
        java.util.concurrent.CountDownLatch go = new java.util.concurrent.CountDownLatch(1);
        for (int i = 0; i < n; i++) {
            LockManager m = PgTestSupport.open(i % 2 == 0 ? "schema=" + advisorySchema + "&table=" + table
                    : "mode=lease&schema=" + leaseSchema + "&table=" + table);
            managers.add(m);
            int index = i;
            starts.add(CompletableFuture.supplyAsync(() -> {
                try {
                    go.await();
                } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                }
                try (Lease l = m.tryAcquire(tag + "/ddl-" + index).orElseThrow()) {
                    return l.fencingToken();
                }
            }));
        }
        go.countDown();
        for (CompletableFuture<Long> f : starts) assertThat(f.get(60, TimeUnit.SECONDS)).isPositive();
        try (Connection admin = PgTestSupport.jdbc(PgTestSupport.uri());
             java.sql.Statement st = admin.createStatement()) {
            st.execute("DROP SCHEMA \"" + advisorySchema + "\" CASCADE; DROP SCHEMA \"" + leaseSchema + "\" CASCADE");
        }
    }

    @Test
    void missingPrivilegesAreNotRetriableAndSayWhatToGrant() {
        // the test role may not create objects in information_schema: what a locked-down role meets
        try (LockManager m = PgTestSupport.open("schema=information_schema&table=latchkey_denied")) {
            assertThatThrownBy(() -> m.tryAcquire(tag + "/denied"))
                    .isExactlyInstanceOf(LockBackendException.class)
                    .hasMessageContaining("42501").hasMessageContaining("README")
                    .satisfies(e -> assertThat(((LockBackendException) e).isRetriable()).isFalse());
        }
    }

    @Test
    void withoutFencingTheLockStillExcludesAndInspectStillNamesTheOwner() {
        LockManager a = PgTestSupport.open("fencing=false");
        LockManager b = PgTestSupport.open("fencing=false");
        managers.add(a);
        managers.add(b);
        assertThat(a.capabilities()).doesNotContain(Capability.FENCING_TOKENS).contains(Capability.HOLDER_DEATH_DETECTION);
        String key = tag + "/no-fencing";
        Lease lease = a.tryAcquire(key, LeaseOptions.ttl(Duration.ofSeconds(60)).withOwner("quick")).orElseThrow();
        assertThat(lease.fencingToken()).isZero();
        assertThat(b.tryAcquire(key)).isEmpty();
        assertThat(b.inspect(key)).map(LockInfo::owner).contains("quick");
        lease.release();
        assertThat(b.inspect(key)).isEmpty();
    }

    /**
     * {@code fencing=false}: a key this manager already recorded is taken without a row write
     * (tryAcquire and a waiting acquire); the holding session names the lease in its
     * application_name, inspect and list wait for the background write and then show the new
     * holder, and release gives the session its configured name back.
     */
    @Test
    void withoutFencingAReTakenKeyIsDescribedByItsNewHolder() throws Exception {
        String app = "app-" + tag;
        LockManager a = PgTestSupport.open("fencing=false&ApplicationName=" + app);
        LockManager b = PgTestSupport.open("fencing=false");
        managers.add(a);
        managers.add(b);
        String key = tag + "/re-taken";
        a.tryAcquire(key, LeaseOptions.ttl(Duration.ofSeconds(60)).withOwner("first")).orElseThrow().release();

        Lease second = a.tryAcquire(key, LeaseOptions.ttl(Duration.ofSeconds(60)).withOwner("second")
                .withMetadata(Map.of("run", "2"))).orElseThrow();
        assertThat(b.tryAcquire(key)).isEmpty();
        try (Connection admin = PgTestSupport.jdbc(PgTestSupport.uri())) {
            int pid = holderPid(admin, key);
            assertThat(applicationName(admin, pid)).isEqualTo(app + " lease " + second.leaseId());
            LockInfo info = b.inspect(key).orElseThrow();
            assertThat(info.leaseId()).isEqualTo(second.leaseId());
            assertThat(info.owner()).isEqualTo("second");
            assertThat(info.metadata()).isEqualTo(Map.of("run", "2"));
            assertThat(b.list(tag + "/")).extracting(LockInfo::leaseId).containsExactly(second.leaseId());

            // a waiting acquire of the recorded key, handed the lock by another manager
            second.release();
            assertThat(applicationName(admin, pid)).as("after release").isEqualTo(app);
            Lease other = b.tryAcquire(key).orElseThrow();
            CompletableFuture<Lease> third = CompletableFuture.supplyAsync(() ->
                    a.acquire(key, Duration.ofSeconds(30), LeaseOptions.ttl(Duration.ofSeconds(60)).withOwner("third")));
            awaitQueuedWaiter(admin, key);
            other.release();
            Lease thirdLease = third.get(30, TimeUnit.SECONDS);
            assertThat(b.inspect(key)).map(LockInfo::owner).contains("third");
            assertThat(b.inspect(key)).map(LockInfo::leaseId).contains(thirdLease.leaseId());
            thirdLease.release();
            assertThat(b.inspect(key)).isEmpty();
        }
    }

    private static int holderPid(Connection admin, String key) throws Exception {
        try (PreparedStatement ps = admin.prepareStatement("SELECT pid FROM pg_locks WHERE locktype = 'advisory'"
                + " AND granted AND objsubid = 1 AND ((classid::int8 << 32) | objid::int8) = ?")) {
            ps.setLong(1, AdvisoryLockManager.lockId("public", key));
            try (ResultSet rs = ps.executeQuery()) {
                assertThat(rs.next()).as("a session holds '%s'", key).isTrue();
                return rs.getInt(1);
            }
        }
    }

    private static String applicationName(Connection admin, int pid) throws Exception {
        try (PreparedStatement ps = admin.prepareStatement("SELECT application_name FROM pg_stat_activity WHERE pid = ?")) {
            ps.setInt(1, pid);
            try (ResultSet rs = ps.executeQuery()) {
                assertThat(rs.next()).as("session %s", pid).isTrue();
                return rs.getString(1);
            }
        }
    }

    /** Waits until a session is queued (not granted) on the advisory lock of {@code key}. */
    private static void awaitQueuedWaiter(Connection admin, String key) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        try (PreparedStatement ps = admin.prepareStatement("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'"
                + " AND NOT granted AND objsubid = 1 AND ((classid::int8 << 32) | objid::int8) = ?")) {
            ps.setLong(1, AdvisoryLockManager.lockId("public", key));
            while (true) {
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    if (rs.getInt(1) > 0) return;
                }
                assertThat(System.nanoTime()).as("a waiter queued on '%s'", key).isLessThan(deadline);
                TimeUnit.MILLISECONDS.sleep(10); // pacing between polls of server state
            }
        }
    }

    @Test
    void waiterKeepsTheTokenDrawnBeforeItsWaitWhenNoOneOvertookIt() throws Exception {
        LockManager a = manager();
        LockManager b = manager();
        String key = tag + "/handoff";
        Lease first = a.tryAcquire(key, LeaseOptions.ttl(Duration.ofSeconds(60))).orElseThrow();
        CompletableFuture<Lease> waiter = CompletableFuture.supplyAsync(
                () -> b.acquire(key, Duration.ofSeconds(30), LeaseOptions.ttl(Duration.ofSeconds(60))));
        try (Connection admin = PgTestSupport.jdbc(PgTestSupport.uri())) {
            awaitQueuedWaiter(admin, key);
        }
        first.release();
        Lease second = waiter.get(30, TimeUnit.SECONDS);
        assertThat(second.fencingToken()).isGreaterThan(first.fencingToken());
        assertThat(a.inspect(key).map(LockInfo::fencingToken)).contains(second.fencingToken());
        second.release();
    }

    /**
     * While a waiter waits with the token it drew, a later token is handed out and the row then says
     * so ({@code overtaken}), says nothing (a {@code fencing=false} holder recorded NULL after it), or
     * is gone: the waiter must not use its older token, and records a fresh one above the later one.
     */
    @ParameterizedTest
    @ValueSource(strings = {"UPDATE latchkey_advisory a SET token = p.later FROM p WHERE a.key = p.key",
            "UPDATE latchkey_advisory a SET token = NULL FROM p WHERE a.key = p.key",
            "DELETE FROM latchkey_advisory a USING p WHERE a.key = p.key"})
    void waiterOvertakenWhileWaitingRecordsAFreshHigherToken(String rowChange) throws Exception {
        LockManager a = manager();
        LockManager b = manager();
        String key = tag + "/overtaken";
        Lease first = a.tryAcquire(key, LeaseOptions.ttl(Duration.ofSeconds(60))).orElseThrow();
        CompletableFuture<Lease> waiter = CompletableFuture.supplyAsync(
                () -> b.acquire(key, Duration.ofSeconds(30), LeaseOptions.ttl(Duration.ofSeconds(60))));
        long later;
        try (Connection admin = PgTestSupport.jdbc(PgTestSupport.uri());
             java.sql.Statement st = admin.createStatement()) {
            awaitQueuedWaiter(admin, key);
            try (ResultSet rs = st.executeQuery("SELECT nextval('latchkey_advisory_token_seq')")) {
                rs.next();
                later = rs.getLong(1);
            }
            try (PreparedStatement ps = admin.prepareStatement("WITH p AS (SELECT ?::text AS key, ?::bigint AS later) " + rowChange)) {
                ps.setString(1, key);
                ps.setLong(2, later);
                assertThat(ps.executeUpdate()).isOne();
            }
        }
        first.release();
        Lease second = waiter.get(30, TimeUnit.SECONDS);
        assertThat(second.fencingToken()).as("token after one drawn later than the waiter's").isGreaterThan(later);
        assertThat(a.inspect(key).map(LockInfo::fencingToken)).contains(second.fencingToken());
        second.release();
    }
}
