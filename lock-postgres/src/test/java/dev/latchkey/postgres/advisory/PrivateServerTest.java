package dev.latchkey.postgres.advisory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.latchkey.Latchkey;
import dev.latchkey.Lease;
import dev.latchkey.LeaseLostException;
import dev.latchkey.LeaseOptions;
import dev.latchkey.LockBackendException;
import dev.latchkey.LockInfo;
import dev.latchkey.LockListener;
import dev.latchkey.LockManager;
import dev.latchkey.LockTimeoutException;
import dev.latchkey.postgres.shared.PgSettings;
import dev.latchkey.postgres.shared.PgTestSupport;
import dev.latchkey.spi.LockContext;
import dev.latchkey.spi.LockUri;
import dev.latchkey.tck.ExternalServer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The server restarts, crashes or goes away while leases are held, the database sets timeouts of
 * its own, and a role lacks privileges. Runs on a private server (started by scripts/postgres.sh
 * into a directory of its own) so that restarting it or changing its settings disturbs no other
 * test, and so that the script's unprivileged second role is known to exist.
 */
class PrivateServerTest {
    private static Path dir;
    private static String uri;
    private static String password;
    private static String endpoint;
    private final String tag = "private-" + UUID.randomUUID().toString().substring(0, 8);

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

    /** A schema of its own per test: its registry's longest TTL is what a restart makes keys wait. */
    private String schema(String purpose) {
        return purpose + "_" + tag.replace("-", "_");
    }

    /**
     * A restart frees every advisory lock at once, but a lease granted before it may still be valid
     * on a client that has not noticed (partitioned, paused): no key held before the restart is granted
     * again until the schema's longest TTL has passed since it. A key never held is free at once; lease
     * rows survive, and both modes resume on the same managers.
     */
    @Test
    void restartLosesAdvisoryLeasesButGrantsNoKeyHeldBeforeWithinItsTtlAndKeepsLeaseRows() throws Exception {
        Duration ttl = Duration.ofSeconds(10); // a fast restart takes 1-5 s here: the re-grant used to follow at once
        try (LockManager advisory = Latchkey.open(uri + "?schema=" + schema("restart"));
             LockManager lease = Latchkey.open(uri + "?mode=lease&schema=" + schema("restart_lease"))) {
            String k = tag + "/job";
            Lease a = advisory.tryAcquire(k, LeaseOptions.ttl(ttl)).orElseThrow();
            CompletableFuture<LeaseLostException> lost = new CompletableFuture<>();
            a.onLost(lost::complete);
            Lease l = lease.tryAcquire(k, LeaseOptions.ttl(Duration.ofSeconds(60)).withoutHeartbeat()).orElseThrow();
            assertThat(advisory.inspect(k)).isPresent(); // leaves an idle pooled connection behind, to go stale
            assertThat(lease.inspect(k)).isPresent();

            long restartedAt = System.nanoTime();
            server("restart");

            // the advisory lock died with its session: the holder hears of it
            assertThat(lost.get(30, TimeUnit.SECONDS).reason()).isEqualTo(LeaseLostException.Reason.SESSION_ENDED);
            assertThat(a.isValid()).isFalse();
            // a key nobody held before the restart is free at once
            recovers(() -> advisory.tryAcquire(tag + "/fresh", LeaseOptions.ttl(ttl))).orElseThrow().release();
            Lease a2 = recovers(() -> advisory.acquire(k, Duration.ofSeconds(60), LeaseOptions.ttl(ttl)));
            assertThat(Duration.ofNanos(System.nanoTime() - restartedAt)).as("restart to re-grant of a key held before it")
                    .isGreaterThanOrEqualTo(ttl);
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

    /**
     * While the restart guard keeps a key busy, a user can see it: {@code inspect} and {@code list}
     * (also of a manager opened after the restart, as {@code latchkey status} is) name the guard and
     * its end, a refused acquisition names it, each refusal is a {@code storeWait} event, and each
     * manager logs one WARNING for the window, not one per attempt. A key never held is not guarded.
     */
    @Test
    void restartGuardShowsInInspectListRefusalsEventsAndOneWarningPerManager() throws Exception {
        Duration ttl = Duration.ofSeconds(60); // the window outlasts the test: nothing here waits for it
        LeaseOptions options = LeaseOptions.ttl(ttl);
        BlockingQueue<String> storeWaits = new LinkedBlockingQueue<>();
        LockListener listener = new LockListener() {
            @Override
            public void storeWait(String scheme, String key, String reason, Instant until) {
                storeWaits.add(scheme + " " + key + " " + reason + " " + until);
            }
        };
        List<String> warnings = new CopyOnWriteArrayList<>();
        Handler handler = new Handler() {
            @Override public void publish(LogRecord r) {
                if (r.getLevel().intValue() >= Level.WARNING.intValue() && r.getMessage().contains(schema("guard"))) {
                    warnings.add(r.getMessage());
                }
            }
            @Override public void flush() {}
            @Override public void close() {}
        };
        Logger events = Logger.getLogger("dev.latchkey.events");
        events.addHandler(handler);
        try (LockManager m = Latchkey.open(uri + "?schema=" + schema("guard"), LockContext.defaults().withListener(listener))) {
            String k = tag + "/guarded";
            m.tryAcquire(k, options).orElseThrow().release(); // its row now records a holder from before the restart
            server("restart");

            assertThat(recovers(() -> m.tryAcquire(k, options))).isEmpty();
            assertThat(m.tryAcquire(k, options)).isEmpty();
            assertThatThrownBy(() -> m.acquire(k, Duration.ofMillis(200), options)).isInstanceOf(LockTimeoutException.class)
                    .hasMessageContaining("held by the restart guard until ");
            LockInfo guard = m.inspect(k).orElseThrow();
            assertThat(guard.owner()).startsWith("the restart guard until " + guard.expiresAt());
            assertThat(guard.leaseId()).isNull();
            assertThat(guard.expiresAt()).isAfter(Instant.now()).isBefore(Instant.now().plus(ttl).plusSeconds(1));
            for (int i = 0; i < 3; i++) {
                assertThat(storeWaits.poll(30, TimeUnit.SECONDS)).as("store wait %d", i)
                        .isEqualTo("postgres " + k + " restart-guard " + guard.expiresAt());
            }
            assertThat(m.tryAcquire(tag + "/never-held", options)).as("a key never held is not guarded").isPresent()
                    .get().satisfies(Lease::release);
            assertThat(warnings).as("WARNING lines of the manager that saw the restart").hasSize(1);
            assertThat(warnings.get(0)).contains("restart-guard", guard.expiresAt().toString(), endpoint).doesNotContain(password);

            try (LockManager fresh = Latchkey.open(uri + "?schema=" + schema("guard"))) {
                assertThat(fresh.inspect(k)).as("a manager opened after the restart sees the guard").contains(guard);
                assertThat(fresh.list(tag)).containsExactly(guard);
                assertThat(fresh.inspect(tag + "/unknown")).isEmpty();
            }
            assertThat(warnings).as("one more WARNING, of the fresh manager").hasSize(2);
            assertThat(storeWaits).as("no store wait but for refused acquisitions").isEmpty();
        } finally {
            events.removeHandler(handler);
        }
    }

    /**
     * A crash (pg_ctl -m immediate: no checkpoint, crash recovery) frees every lock as a restart does,
     * and keeps every fencing token handed out before it: including one a waiter was granted through
     * the hand-off, whose row write need not wait for the disk.
     */
    @Test
    void crashGrantsNoKeyHeldBeforeWithinItsTtlAndTokensKeepRising() throws Exception {
        Duration ttl = Duration.ofSeconds(8); // crash and recovery take 1-4 s here
        try (LockManager first = Latchkey.open(uri + "?schema=" + schema("crash"));
             LockManager second = Latchkey.open(uri + "?schema=" + schema("crash"))) {
            String k = tag + "/crash";
            List<Long> tokens = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                try (Lease l = first.tryAcquire(k, LeaseOptions.ttl(ttl)).orElseThrow()) {
                    tokens.add(l.fencingToken());
                }
            }
            Lease held = first.tryAcquire(k, LeaseOptions.ttl(ttl)).orElseThrow();
            tokens.add(held.fencingToken());
            CompletableFuture<Lease> waiter = CompletableFuture.supplyAsync(
                    () -> second.acquire(k, Duration.ofSeconds(30), LeaseOptions.ttl(ttl)));
            try (Connection admin = PgTestSupport.jdbc(uri)) {
                awaitQueuedWaiter(admin, schema("crash"), k);
            }
            held.release();
            Lease handedOff = waiter.get(30, TimeUnit.SECONDS);
            tokens.add(handedOff.fencingToken());
            CompletableFuture<LeaseLostException> lost = new CompletableFuture<>();
            handedOff.onLost(lost::complete);

            long crashedAt = System.nanoTime();
            server("crash");
            server("resume");

            assertThat(lost.get(30, TimeUnit.SECONDS).reason()).isEqualTo(LeaseLostException.Reason.SESSION_ENDED);
            Lease after = recovers(() -> first.acquire(k, Duration.ofSeconds(60), LeaseOptions.ttl(ttl)));
            assertThat(Duration.ofNanos(System.nanoTime() - crashedAt)).as("crash to re-grant of a key held before it")
                    .isGreaterThanOrEqualTo(ttl);
            assertThat(tokens).isSorted().doesNotHaveDuplicates();
            assertThat(after.fencingToken()).as("token after the crash, above %s", tokens).isGreaterThan(tokens.get(tokens.size() - 1));
            after.release();
        }
    }

    /**
     * A failover: the primary dies and its streaming replica is promoted. The replica's postmaster
     * started long ago and never held the primary's advisory locks; its new WAL timeline tells the
     * lock that every lock of the old primary is gone, so a key held there is not granted until its
     * TTL has passed. (The replica has replayed everything here, as synchronous replication ensures.)
     */
    @Test
    void failoverToAPromotedReplicaGrantsNoKeyHeldBeforeWithinItsTtl() throws Exception {
        Duration ttl = Duration.ofSeconds(5);
        Path replicaDir = Files.createTempDirectory("latchkey-postgres-replica-");
        String replica = ExternalServer.script("postgres", "replica", dir.toString(), replicaDir.toString());
        try (LockManager primary = Latchkey.open(uri + "?schema=" + schema("failover"))) {
            String k = tag + "/failover";
            Lease held = primary.tryAcquire(k, LeaseOptions.ttl(ttl)).orElseThrow();
            awaitReplayed(replica);
            server("crash");
            ExternalServer.script("postgres", "promote", replicaDir.toString());
            long promotedAt = System.nanoTime();
            try (LockManager promoted = Latchkey.open(replica + "?schema=" + schema("failover"))) {
                promoted.tryAcquire(tag + "/fresh", LeaseOptions.ttl(ttl)).orElseThrow().release(); // never held: free
                Lease next = promoted.acquire(k, Duration.ofSeconds(60), LeaseOptions.ttl(ttl));
                assertThat(Duration.ofNanos(System.nanoTime() - promotedAt)).as("promotion to re-grant of a key held before")
                        .isGreaterThanOrEqualTo(ttl);
                assertThat(next.fencingToken()).isGreaterThan(held.fencingToken());
                next.release();
            }
        } finally {
            ExternalServer.script("postgres", "stop", replicaDir.toString());
            server("resume");
        }
    }

    /** Waits until the replica has replayed the primary's WAL as it is now. */
    private static void awaitReplayed(String replica) throws Exception {
        try (Connection p = PgTestSupport.jdbc(uri); Connection r = PgTestSupport.jdbc(replica);
             Statement ps = p.createStatement(); ResultSet lsn = ps.executeQuery("SELECT pg_current_wal_lsn()::text")) {
            lsn.next();
            String target = lsn.getString(1);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            try (PreparedStatement rs = r.prepareStatement("SELECT pg_wal_lsn_diff(pg_last_wal_replay_lsn(), ?::pg_lsn) >= 0")) {
                rs.setString(1, target);
                while (true) {
                    try (ResultSet done = rs.executeQuery()) {
                        done.next();
                        if (done.getBoolean(1)) return;
                    }
                    assertThat(System.nanoTime()).as("the replica replays up to %s", target).isLessThan(deadline);
                    TimeUnit.MILLISECONDS.sleep(20); // pacing between polls of server state
                }
            }
        }
    }

    /**
     * The database's own timeouts used to end a pinned session (idle_session_timeout: a second client
     * got the key 3 s into a 30 s lease) or cut a wait short (statement_timeout); lease mode's pooled
     * connections, idle past the limit, failed the next call.
     */
    @Test
    void theDatabasesTimeoutsEndNoPinnedSessionAndCutNoWaitShort() throws Exception {
        try (Connection admin = PgTestSupport.jdbc(uri); Statement st = admin.createStatement()) {
            st.execute("ALTER DATABASE latchkey SET idle_session_timeout = '1500ms'");
            st.execute("ALTER DATABASE latchkey SET statement_timeout = '500ms'");
            st.execute("ALTER DATABASE latchkey SET idle_in_transaction_session_timeout = '500ms'");
            try (LockManager holder = Latchkey.open(uri + "?schema=" + schema("timeouts"));
                 LockManager contender = Latchkey.open(uri + "?schema=" + schema("timeouts"));
                 LockManager lease = Latchkey.open(uri + "?mode=lease&schema=" + schema("timeouts_lease"))) {
                String k = tag + "/timeouts";
                Lease held = holder.tryAcquire(k, LeaseOptions.ttl(Duration.ofSeconds(30))).orElseThrow();
                Lease row = lease.tryAcquire(k, LeaseOptions.ttl(Duration.ofSeconds(30)).withoutHeartbeat()).orElseThrow();
                TimeUnit.SECONDS.sleep(3); // past the database's idle_session_timeout, before the first heartbeat (10 s)

                assertThat(contender.tryAcquire(k)).as("a second client 3 s into a 30 s lease").isEmpty();
                assertThat(held.isValid()).isTrue();
                assertThatThrownBy(() -> contender.acquire(k, Duration.ofSeconds(2)))
                        .as("a 2 s wait, past statement_timeout").isExactlyInstanceOf(LockTimeoutException.class);
                held.renew();
                row.renew();
                held.release();
                row.release();
            }
        } finally {
            try (Connection admin = PgTestSupport.jdbc(uri); Statement st = admin.createStatement()) {
                st.execute("ALTER DATABASE latchkey RESET idle_session_timeout");
                st.execute("ALTER DATABASE latchkey RESET statement_timeout");
                st.execute("ALTER DATABASE latchkey RESET idle_in_transaction_session_timeout");
            }
        }
    }

    /** Waits until a session is queued (not granted) on the advisory lock of {@code key} in {@code schemaName}. */
    private static void awaitQueuedWaiter(Connection admin, String schemaName, String key) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        try (PreparedStatement ps = admin.prepareStatement("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'"
                + " AND NOT granted AND objsubid = 1 AND ((classid::int8 << 32) | objid::int8) = ?")) {
            ps.setLong(1, AdvisoryLockManager.lockId(schemaName, key));
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
    void outageGivesRetriableErrorsThenNormalService() throws Exception {
        try (LockManager advisory = Latchkey.open(uri + "?schema=" + schema("outage"));
             LockManager lease = Latchkey.open(uri + "?mode=lease&schema=" + schema("outage_lease"))) {
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
             LockManager ownerLeases = Latchkey.open(uri + "?mode=lease&schema=" + schema("grants_lease"));
             LockManager strangerLeases = Latchkey.open(peer + "?mode=lease&schema=" + schema("grants_lease"))) {
            String k = tag + "/guarded";
            Lease held = owner.tryAcquire(k, LeaseOptions.ttl(Duration.ofSeconds(60))).orElseThrow();
            assertThat(ownerLeases.inspect(k)).isEmpty(); // both tables exist, owned by latchkey
            // the stranger may read which mode the schema's locks use (every client checks that first)
            try (Connection admin = PgTestSupport.jdbc(uri); Statement st = admin.createStatement()) {
                st.execute("GRANT SELECT ON public.latchkey_registry TO latchkey_peer");
            }

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
