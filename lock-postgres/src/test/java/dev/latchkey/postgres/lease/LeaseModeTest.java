package dev.latchkey.postgres.lease;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.latchkey.Capability;
import dev.latchkey.Latchkey;
import dev.latchkey.Lease;
import dev.latchkey.LeaseLostException;
import dev.latchkey.LeaseOptions;
import dev.latchkey.LockBackendException;
import dev.latchkey.LockInfo;
import dev.latchkey.LockManager;
import dev.latchkey.postgres.shared.PgTestSupport;
import dev.latchkey.postgres.shared.TcpProxy;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** mode=lease beyond the TCK: NOTIFY wake-ups, server-clock rows, no pinned connections. */
class LeaseModeTest {
    private final String tag = "lease-" + UUID.randomUUID().toString().substring(0, 8);
    private final List<LockManager> managers = new ArrayList<>();

    private LockManager manager(String params) {
        LockManager m = PgTestSupport.open(params.isEmpty() ? PgTestSupport.LEASE : PgTestSupport.LEASE + "&" + params);
        managers.add(m);
        return m;
    }

    @AfterEach
    void closeManagers() {
        managers.forEach(LockManager::close);
    }

    @Test
    void declaresServerSideExpiry() {
        assertThat(manager("").capabilities()).containsExactlyInAnyOrder(Capability.FENCING_TOKENS,
                Capability.SERVER_SIDE_EXPIRY, Capability.LIST, Capability.NATIVE_WAIT);
    }

    @Test
    void waiterIsWokenByNotifyNotByPolling() throws Exception {
        // polling every 10 minutes: only the NOTIFY on release can wake the waiter within the test's limit
        LockManager a = manager("poll=10m");
        LockManager b = manager("poll=10m&ApplicationName=" + tag);
        String key = tag + "/handoff";
        Lease first = a.tryAcquire(key, LeaseOptions.ttl(Duration.ofMinutes(5))).orElseThrow();
        CompletableFuture<Lease> waiter = CompletableFuture.supplyAsync(
                () -> b.acquire(key, Duration.ofMinutes(5), LeaseOptions.ttl(Duration.ofMinutes(5))));
        // the waiter's manager opens its LISTEN session before the first attempt; release after it is active
        awaitListener();
        first.release();
        Lease second = waiter.get(60, TimeUnit.SECONDS);
        assertThat(second.fencingToken()).isGreaterThan(first.fencingToken());
        second.release();
    }

    /** Waits until this test's waiting manager has run LISTEN (pg_listening_channels is per session). */
    private void awaitListener() throws Exception {
        try (Connection admin = PgTestSupport.jdbc(PgTestSupport.uri());
             PreparedStatement ps = admin.prepareStatement("SELECT count(*) FROM pg_stat_activity"
                     + " WHERE application_name = ? AND state = 'idle' AND query LIKE 'LISTEN %'")) {
            ps.setString(1, tag);
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (System.nanoTime() < until) {
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    if (rs.getInt(1) > 0) return;
                }
                TimeUnit.MILLISECONDS.sleep(20); // pacing between polls of server state
            }
        }
        throw new AssertionError("the waiting manager opened no LISTEN session");
    }

    @Test
    void heldLeasesPinNoConnection() throws Exception {
        LockManager a = manager("ApplicationName=" + tag);
        List<Lease> held = new ArrayList<>();
        for (int i = 0; i < 30; i++) {
            held.add(a.tryAcquire(tag + "/many-" + i, LeaseOptions.ttl(Duration.ofMinutes(1)).withoutHeartbeat()).orElseThrow());
        }
        try (Connection admin = PgTestSupport.jdbc(PgTestSupport.uri());
             PreparedStatement ps = admin.prepareStatement("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
                     + " AND application_name = ?")) {
            ps.setString(1, tag);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                assertThat(rs.getInt(1)).as("latchkey sessions while 30 leases are held").isLessThanOrEqualTo(8);
            }
        }
        assertThat(a.list(tag + "/many-")).hasSize(30);
        for (Lease l : held) l.release();
        assertThat(a.list(tag + "/many-")).isEmpty();
    }

    @Test
    void expiryIsDecidedByTheServerClock() throws Exception {
        LockManager a = manager("");
        String key = tag + "/server-clock";
        Lease lease = a.tryAcquire(key, LeaseOptions.ttl(Duration.ofSeconds(60))).orElseThrow();
        try (Connection admin = PgTestSupport.jdbc(PgTestSupport.uri());
             PreparedStatement ps = admin.prepareStatement("SELECT extract(epoch FROM expires_at - clock_timestamp()),"
                     + " lease_id FROM " + PgTestSupport.LEASE_TABLE + " WHERE key = ?")) {
            ps.setString(1, key);
            try (ResultSet rs = ps.executeQuery()) {
                assertThat(rs.next()).isTrue();
                assertThat(rs.getDouble(1)).as("seconds left by the server's clock").isBetween(0.0, 60.0);
                assertThat(rs.getString(2)).isEqualTo(lease.leaseId());
            }
        }
        // a takeover by a hand-made expiry proves the row, not the client, decides
        try (Connection admin = PgTestSupport.jdbc(PgTestSupport.uri());
             PreparedStatement ps = admin.prepareStatement("UPDATE " + PgTestSupport.LEASE_TABLE + " SET expires_at = clock_timestamp() WHERE key = ?")) {
            ps.setString(1, key);
            assertThat(ps.executeUpdate()).isOne();
        }
        Lease next = a.tryAcquire(key, LeaseOptions.ttl(Duration.ofSeconds(60))).orElseThrow();
        assertThat(next.fencingToken()).isEqualTo(lease.fencingToken() + 1);
        assertThatThrownBy(lease::renew).isInstanceOf(LeaseLostException.class);
        assertThatThrownBy(lease::release).isInstanceOf(LeaseLostException.class);
        assertThat(a.inspect(key).map(LockInfo::leaseId)).contains(next.leaseId());
        next.release();
    }

    /**
     * An acquisition whose reply is lost (the proxy passes the request and drops the answer) lands:
     * its lease id, which nobody holds, used to keep the key for the whole TTL. It is withdrawn in
     * the background, so a waiter gets the key long before the 5-minute TTL.
     */
    @Test
    void anAcquisitionWhoseReplyIsLostIsWithdrawnNotLeftForItsTtl() throws Exception {
        try (TcpProxy proxy = new TcpProxy(PgTestSupport.uri())) {
            LockManager lost = Latchkey.open(PgTestSupport.with(proxy.uri(PgTestSupport.uri()), PgTestSupport.LEASE + "&timeout=1s"));
            managers.add(lost);
            LockManager next = manager("poll=50ms");
            String key = tag + "/lost-acquire";
            LeaseOptions ttl = LeaseOptions.ttl(Duration.ofMinutes(5));
            lost.tryAcquire(tag + "/warm-up").orElseThrow().release(); // prepared, and a pooled connection
            next.tryAcquire(key, ttl).orElseThrow().release();
            long before = row(key).token;

            proxy.mode(TcpProxy.Mode.DROP_REPLIES);
            assertThatThrownBy(() -> lost.tryAcquire(key, ttl)).isExactlyInstanceOf(LockBackendException.class)
                    .satisfies(e -> assertThat(((LockBackendException) e).isRetriable()).isTrue());
            assertThat(row(key).token).as("the lost acquisition landed").isEqualTo(before + 1);
            proxy.mode(TcpProxy.Mode.FORWARD);

            Lease taken = next.acquire(key, Duration.ofSeconds(60), ttl);
            assertThat(taken.fencingToken()).isEqualTo(before + 2);
            taken.release();
        }
    }

    /**
     * A renewal whose reply is lost lands and extends the row beyond what the lease knows; once the
     * lease has run out, that extension is withdrawn when the row would have expired without it: by
     * the server's clock, the next holder gets in before the extended expiry.
     */
    @Test
    void aRenewalWhoseReplyIsLostExtendsNothingOnceTheLeaseHasRunOut() throws Exception {
        try (TcpProxy proxy = new TcpProxy(PgTestSupport.uri())) {
            LockManager holder = Latchkey.open(PgTestSupport.with(proxy.uri(PgTestSupport.uri()), PgTestSupport.LEASE + "&timeout=1s"));
            managers.add(holder);
            LockManager next = manager("poll=50ms");
            String key = tag + "/lost-renewal";
            Lease lease = holder.tryAcquire(key, LeaseOptions.ttl(Duration.ofSeconds(4)).withoutHeartbeat()).orElseThrow();
            Row acquired = row(key);
            TimeUnit.SECONDS.sleep(2); // the renewal must extend the row well past the acquisition's expiry

            proxy.mode(TcpProxy.Mode.DROP_REPLIES);
            assertThatThrownBy(lease::renew).isExactlyInstanceOf(LockBackendException.class);
            Row renewed = row(key);
            assertThat(renewed.leaseId).isEqualTo(lease.leaseId());
            assertThat(Duration.between(acquired.expiresAt, renewed.expiresAt)).as("the lost renewal landed")
                    .isGreaterThanOrEqualTo(Duration.ofSeconds(1));
            proxy.mode(TcpProxy.Mode.FORWARD);

            Lease taken = next.acquire(key, Duration.ofSeconds(60), LeaseOptions.ttl(Duration.ofSeconds(60)));
            assertThat(lease.isValid()).isFalse();
            assertThat(row(key).acquiredAt).as("taken over, by the server's clock, before the lost renewal's expiry")
                    .isBefore(renewed.expiresAt);
            taken.release();
        }
    }

    /** A lock row as the server has it. */
    private record Row(String leaseId, long token, java.time.Instant acquiredAt, java.time.Instant expiresAt) {}

    private static Row row(String key) throws Exception {
        try (Connection admin = PgTestSupport.jdbc(PgTestSupport.uri());
             PreparedStatement ps = admin.prepareStatement("SELECT lease_id, token, acquired_at, expires_at FROM "
                     + PgTestSupport.LEASE_TABLE + " WHERE key = ?")) {
            ps.setString(1, key);
            try (ResultSet rs = ps.executeQuery()) {
                assertThat(rs.next()).as("row of '%s'", key).isTrue();
                return new Row(rs.getString(1), rs.getLong(2), rs.getTimestamp(3).toInstant(), rs.getTimestamp(4).toInstant());
            }
        }
    }

    /**
     * A holder whose row expired on the server's clock early (a server clock stepped forward does that;
     * here the row's expires_at is set back) and was taken over is told so — taken over, not
     * force-released — also after the taker has released the key again.
     */
    @Test
    void aLeaseWhoseExpiredRowWasTakenOverIsToldSoAfterTheTakerReleased() throws Exception {
        LockManager a = manager("");
        LockManager b = manager("");
        String key = tag + "/stepped";
        LeaseOptions options = LeaseOptions.ttl(Duration.ofMinutes(5)).withoutHeartbeat();
        Lease first = a.tryAcquire(key, options).orElseThrow();
        try (Connection admin = PgTestSupport.jdbc(PgTestSupport.uri());
             PreparedStatement ps = admin.prepareStatement("UPDATE " + PgTestSupport.LEASE_TABLE
                     + " SET expires_at = clock_timestamp() - interval '1 second' WHERE key = ?")) {
            ps.setString(1, key);
            assertThat(ps.executeUpdate()).isEqualTo(1);
        }
        b.tryAcquire(key, options).orElseThrow().release();
        assertThatThrownBy(first::release).isExactlyInstanceOf(LeaseLostException.class)
                .satisfies(e -> assertThat(((LeaseLostException) e).reason()).isEqualTo(LeaseLostException.Reason.TAKEN_OVER))
                .hasMessageContaining("expired on the server's clock");
    }

    @Test
    void listenerSkipsTheDriversTrailingReadAndStillSeesEveryNotification() throws Exception {
        String channel = "lk_" + tag.replace("-", "_");
        try (Connection listening = PgTestSupport.jdbc(PgTestSupport.uri());
             Connection notifying = PgTestSupport.jdbc(PgTestSupport.uri())) {
            try (java.sql.Statement st = listening.createStatement()) {
                st.execute("LISTEN " + channel);
            }
            // if the driver's internals change, this fails here rather than silently costing 1 ms per wake-up
            assertThat(ReleaseListener.skipTrailingPeek(listening)).isTrue();
            org.postgresql.PGConnection pg = listening.unwrap(org.postgresql.PGConnection.class);
            for (int i = 0; i < 3; i++) {
                try (PreparedStatement ps = notifying.prepareStatement("SELECT pg_notify(?, ?)")) {
                    ps.setString(1, channel);
                    ps.setString(2, "n" + i);
                    ps.execute();
                }
                org.postgresql.PGNotification[] got = pg.getNotifications(30_000);
                assertThat(got).as("notification %d", i).isNotNull().hasSize(1);
                assertThat(got[0].getParameter()).isEqualTo("n" + i);
            }
        }
    }
}
