package dev.latchkey.postgres.advisory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.latchkey.Lease;
import dev.latchkey.LeaseOptions;
import dev.latchkey.LockBackendException;
import dev.latchkey.LockManager;
import dev.latchkey.postgres.shared.PgTestSupport;
import dev.latchkey.postgres.shared.TcpProxy;
import dev.latchkey.tck.MultiProcessContention;
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
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * mode=advisory when the holder's side goes quiet or away, played through a {@link TcpProxy}: the
 * server, not the holder, has to end the session — after the holder's lease is invalid, and within
 * its idle limit (TTL + TTL/5), not the hours of the OS's TCP keepalives.
 */
class AdvisoryLivenessTest {
    private final String tag = "live-" + UUID.randomUUID().toString().substring(0, 8);
    private final List<AutoCloseable> closing = new ArrayList<>();

    private LockManager manager(String uri) {
        LockManager m = dev.latchkey.Latchkey.open(uri);
        closing.add(m);
        return m;
    }

    private TcpProxy proxy() throws Exception {
        TcpProxy p = new TcpProxy(PgTestSupport.uri());
        closing.add(0, p);
        return p;
    }

    @AfterEach
    void close() throws Exception {
        for (AutoCloseable c : closing) c.close();
    }

    /**
     * A holder that goes silent (a frozen process or a partition: the proxy holds every byte, both
     * connections stay open) used to keep its lock for as long as its kernel kept the connection,
     * hours. Now the server ends the session TTL + TTL/5 after its last statement: the contender gets
     * the key — and only after the frozen holder's own lease had turned invalid.
     */
    @Test
    void aSilentHolderLosesTheLockToTheServersIdleLimitAfterItsLeaseTurnedInvalid() throws Exception {
        TcpProxy proxy = proxy();
        LockManager holder = manager(PgTestSupport.with(proxy.uri(PgTestSupport.uri()), "timeout=1s"));
        LockManager contender = manager(PgTestSupport.uri());
        String key = tag + "/frozen";
        Lease lease = holder.tryAcquire(key, LeaseOptions.ttl(Duration.ofSeconds(3))).orElseThrow();
        AtomicLong lostAt = new AtomicLong();
        lease.onLost(e -> lostAt.set(System.nanoTime()));

        proxy.mode(TcpProxy.Mode.FREEZE);
        Lease next = contender.acquire(key, Duration.ofSeconds(60), LeaseOptions.ttl(Duration.ofSeconds(60)));
        long grantedAt = System.nanoTime();

        assertThat(lostAt.get()).as("the frozen holder's lease had turned invalid (its listener fired)").isNotZero();
        assertThat(grantedAt - lostAt.get()).as("the contender got the key after that").isPositive();
        assertThat(lease.isValid()).isFalse();
        assertThat(next.fencingToken()).isGreaterThan(lease.fencingToken());
        next.release();
    }

    /**
     * The same with a real process: a holder JVM stopped with SIGSTOP (its kernel keeps the
     * connection alive, so the server sees an idle, healthy session). A contender waited on for as
     * long as the process stayed stopped (35 s on a 15 s lease); now it gets the key once the TTL and
     * its margin have passed since the stopped holder's last renewal — and not before the TTL.
     */
    @Test
    void aStoppedHolderProcessLosesTheLockAtItsTtl(@TempDir Path work) throws Exception {
        LockManager contender = manager(PgTestSupport.uri());
        String key = tag + "/stopped";
        Duration ttl = Duration.ofSeconds(4);
        MultiProcessContention.Holder holder = MultiProcessContention.startHolder(PgTestSupport.uri(), key, ttl, work);
        try {
            assertThat(contender.tryAcquire(key)).as("while the holder process runs").isEmpty();
            signal("STOP", holder.process());
            long stoppedAt = System.nanoTime();
            Lease next = contender.acquire(key, Duration.ofSeconds(60), LeaseOptions.ttl(Duration.ofSeconds(60)));
            // its lease was valid when it stopped, so its last renewal went out less than TTL - TTL/5
            // before; the server waits TTL + TTL/5 after that renewal
            assertThat(Duration.ofNanos(System.nanoTime() - stoppedAt)).as("stop to takeover")
                    .isGreaterThanOrEqualTo(ttl.multipliedBy(2).dividedBy(5));
            assertThat(next.fencingToken()).isGreaterThan(holder.fencingToken());
            next.release();
        } finally {
            signal("CONT", holder.process());
            holder.process().destroyForcibly().waitFor();
        }
    }

    private static void signal(String name, Process process) throws Exception {
        Process kill = new ProcessBuilder("kill", "-" + name, Long.toString(process.pid())).inheritIO().start();
        assertThat(kill.waitFor()).as("kill -%s %d", name, process.pid()).isZero();
    }

    /**
     * A waiter whose client dies while it waits in pg_advisory_lock: the server ends its session
     * within a second or so (client_connection_check_interval), rather than waiting on for the whole
     * lock_timeout and then taking the lock for nobody.
     */
    @Test
    void aWaiterWhoseClientDiedStopsWaitingOnTheServer() throws Exception {
        TcpProxy proxy = proxy();
        LockManager holder = manager(PgTestSupport.uri());
        LockManager waiter = manager(proxy.uri(PgTestSupport.uri()));
        String key = tag + "/dead-waiter";
        Lease lease = holder.tryAcquire(key, LeaseOptions.ttl(Duration.ofSeconds(60))).orElseThrow();
        CompletableFuture<Lease> waiting = CompletableFuture.supplyAsync(
                () -> waiter.acquire(key, Duration.ofMinutes(5), LeaseOptions.ttl(Duration.ofSeconds(60))));
        try (Connection admin = PgTestSupport.jdbc(PgTestSupport.uri())) {
            int pid = queuedWaiterPid(admin, key);
            proxy.kill();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (sessionExists(admin, pid)) {
                assertThat(System.nanoTime()).as("the dead waiter's session %d has ended", pid).isLessThan(deadline);
                TimeUnit.MILLISECONDS.sleep(50); // pacing between polls of server state
            }
        }
        assertThatThrownBy(() -> waiting.get(60, TimeUnit.SECONDS)).hasCauseInstanceOf(LockBackendException.class);
        lease.release();
        holder.tryAcquire(key).orElseThrow().release(); // nobody took it for the dead waiter
    }

    /**
     * A try whose reply is lost lands on the server (the lock is taken, the row written) while the
     * client gives up: closing the connection ends that session, and so frees the lock, at once.
     */
    @Test
    void aTryWhoseReplyIsLostIsUndoneByClosingItsSession() throws Exception {
        TcpProxy proxy = proxy();
        LockManager client = manager(PgTestSupport.with(proxy.uri(PgTestSupport.uri()), "timeout=1s"));
        LockManager contender = manager(PgTestSupport.uri());
        String key = tag + "/lost-reply";
        LeaseOptions ttl = LeaseOptions.ttl(Duration.ofSeconds(60));
        // the session is checked and set up for this TTL before the replies go missing
        client.tryAcquire(tag + "/warm-up", ttl).orElseThrow().release();
        contender.tryAcquire(key, ttl).orElseThrow().release();
        long tokenBefore = rowToken(key);

        proxy.mode(TcpProxy.Mode.DROP_REPLIES);
        assertThatThrownBy(() -> client.tryAcquire(key, ttl)).isExactlyInstanceOf(LockBackendException.class)
                .satisfies(e -> assertThat(((LockBackendException) e).isRetriable()).isTrue());
        long landed = rowToken(key);
        assertThat(landed).as("the lost try landed: it drew a token").isGreaterThan(tokenBefore);

        Lease next = contender.acquire(key, Duration.ofSeconds(20), ttl);
        assertThat(next.fencingToken()).isGreaterThan(landed);
        next.release();
    }

    private static long rowToken(String key) throws Exception {
        try (Connection admin = PgTestSupport.jdbc(PgTestSupport.uri());
             PreparedStatement ps = admin.prepareStatement("SELECT token FROM latchkey_advisory WHERE key = ?")) {
            ps.setString(1, key);
            try (ResultSet rs = ps.executeQuery()) {
                assertThat(rs.next()).as("row of '%s'", key).isTrue();
                return rs.getLong(1);
            }
        }
    }

    /** Waits until a session is queued (not granted) on the advisory lock of {@code key}; returns its pid. */
    private static int queuedWaiterPid(Connection admin, String key) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        try (PreparedStatement ps = admin.prepareStatement("SELECT pid FROM pg_locks WHERE locktype = 'advisory'"
                + " AND NOT granted AND objsubid = 1 AND ((classid::int8 << 32) | objid::int8) = ?")) {
            ps.setLong(1, AdvisoryLockManager.lockId("public", key));
            while (true) {
                try (ResultSet rs = ps.executeQuery()) {
                    if (rs.next()) return rs.getInt(1);
                }
                assertThat(System.nanoTime()).as("a waiter queued on '%s'", key).isLessThan(deadline);
                TimeUnit.MILLISECONDS.sleep(10); // pacing between polls of server state
            }
        }
    }

    private static boolean sessionExists(Connection admin, int pid) throws Exception {
        try (PreparedStatement ps = admin.prepareStatement("SELECT count(*) FROM pg_stat_activity WHERE pid = ?")) {
            ps.setInt(1, pid);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getInt(1) > 0;
            }
        }
    }
}
