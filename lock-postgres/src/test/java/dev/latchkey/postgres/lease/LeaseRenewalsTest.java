package dev.latchkey.postgres.lease;

import static org.assertj.core.api.Assertions.assertThat;

import dev.latchkey.Latchkey;
import dev.latchkey.Lease;
import dev.latchkey.LeaseLostException;
import dev.latchkey.LeaseOptions;
import dev.latchkey.LockListener;
import dev.latchkey.LockManager;
import dev.latchkey.postgres.shared.PgTestSupport;
import dev.latchkey.spi.LockContext;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.Isolated;

/**
 * Batched renewals of {@code mode=lease} ({@link LeaseRenewals}) on the real server: the statements a
 * manager sends per heartbeat tick do not grow with the leases it holds, and each lease still gets
 * its own outcome — lost with its row's reason, failed when the statement failed.
 */
@Isolated("counts the database's committed transactions")
class LeaseRenewalsTest {
    private static final long SOON_NANOS = TimeUnit.SECONDS.toNanos(60);
    private final String tag = "renewals-" + UUID.randomUUID().toString().substring(0, 8);
    private final Events events = new Events();
    private final List<LockManager> managers = new ArrayList<>();

    private LockManager manager(String params) {
        LockManager m = Latchkey.open(PgTestSupport.with(PgTestSupport.uri(), PgTestSupport.LEASE + params),
                LockContext.defaults().withListener(events));
        managers.add(m);
        return m;
    }

    @AfterEach
    void closeManagers() {
        managers.forEach(LockManager::close);
    }

    /** Renewals and failed renewals per key of this test, counted as the manager reports them. */
    private final class Events implements LockListener {
        private final Map<String, Integer> renewed = new HashMap<>();
        private final Map<String, Integer> failed = new HashMap<>();
        private int renewedTotal;

        @Override
        public synchronized void renewed(String scheme, String key, Duration validFor) {
            if (!key.startsWith(tag)) return;
            renewed.merge(key, 1, Integer::sum);
            renewedTotal++;
            notifyAll();
        }

        @Override
        public synchronized void renewalFailed(String scheme, String key, Duration validLeft, RuntimeException error) {
            if (!key.startsWith(tag)) return;
            failed.merge(key, 1, Integer::sum);
            notifyAll();
        }

        synchronized int renewedTotal() {
            return renewedTotal;
        }

        synchronized Map<String, Integer> renewed() {
            return new HashMap<>(renewed);
        }

        /** Waits until {@code done} holds of the counts (bounded generously: the machine may be loaded). */
        synchronized void await(String what, java.util.function.BooleanSupplier done) throws InterruptedException {
            long until = System.nanoTime() + SOON_NANOS;
            while (!done.getAsBoolean()) {
                long left = until - System.nanoTime();
                if (left <= 0) throw new AssertionError("timed out waiting for " + what + "; renewed " + renewed + ", failed " + failed);
                TimeUnit.NANOSECONDS.timedWait(this, left);
            }
        }
    }

    private List<Lease> hold(LockManager m, int n, LeaseOptions options) {
        List<Lease> held = new ArrayList<>();
        for (int i = 0; i < n; i++) held.add(m.tryAcquire(tag + "/" + i, options).orElseThrow());
        return held;
    }

    /** Transactions committed in the test database (each statement of the pool is one, autocommit). */
    private static long commits(Connection admin) throws SQLException {
        try (Statement s = admin.createStatement();
             ResultSet rs = s.executeQuery("SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()")) {
            rs.next();
            return rs.getLong(1);
        }
    }

    @Test
    void twoHundredLeasesAreRenewedByAFewStatementsPerTickNotOneEach() throws Exception {
        int leases = 200;
        LockManager m = manager("");
        List<Lease> held = hold(m, leases, LeaseOptions.ttl(Duration.ofSeconds(30)).withHeartbeat(Duration.ofMillis(500)));
        try (Connection admin = PgTestSupport.jdbc(PgTestSupport.uri())) {
            // a tick and more after the acquisitions, so their commits are in the server's count already
            int first = events.renewedTotal();
            events.await("a first round of renewals", () -> events.renewedTotal() >= first + 4 * leases);
            long before = commits(admin);
            int renewedBefore = events.renewedTotal();
            events.await("five more rounds of renewals", () -> events.renewedTotal() >= renewedBefore + 5 * leases);
            long statements = commits(admin) - before;
            int renewals = events.renewedTotal() - renewedBefore;
            // one statement per lease and tick would make it about 1; batched it is about 1/leases (plus
            // this session's own reads and stray server work). A tenth leaves room for all of that.
            assertThat(statements).as("transactions committed for %d renewals", renewals).isLessThan(renewals / 10);
            assertThat(events.renewed().keySet()).hasSize(leases); // every lease was renewed, none left out
        }
        assertThat(held).allMatch(Lease::isValid);
        held.forEach(Lease::release);
    }

    @Test
    void aLeaseWhoseRowWasDeletedBrokenOrTakenOverIsLostByTheBatchWithItsReason() throws Exception {
        LockManager m = manager("");
        List<Lease> held = hold(m, 20, LeaseOptions.ttl(Duration.ofSeconds(30)).withHeartbeat(Duration.ofMillis(300)));
        Map<Lease, CompletableFuture<LeaseLostException>> lost = new HashMap<>();
        for (Lease l : held) {
            CompletableFuture<LeaseLostException> f = new CompletableFuture<>();
            l.onLost(f::complete);
            lost.put(l, f);
        }
        Lease gone = held.get(3);
        Lease broken = held.get(7);
        Lease taken = held.get(11);
        Lease takenAndReleased = held.get(15);
        try (Connection admin = PgTestSupport.jdbc(PgTestSupport.uri())) {
            execute(admin, "DELETE FROM " + PgTestSupport.LEASE_TABLE + " WHERE key = ?", gone.key());
            assertThat(m.forceRelease(broken.key())).isTrue();
            // what a takeover writes: another lease id and the next token
            execute(admin, "UPDATE " + PgTestSupport.LEASE_TABLE + " SET lease_id = 'another', token = token + 1 WHERE key = ?",
                    taken.key());
            // a takeover (after the row expired), then the taker's release: it used to read as "force-released"
            execute(admin, "UPDATE " + PgTestSupport.LEASE_TABLE + " SET lease_id = NULL, token = token + 1 WHERE key = ?",
                    takenAndReleased.key());
        }
        assertThat(lost.get(gone).get(60, TimeUnit.SECONDS).reason()).isEqualTo(LeaseLostException.Reason.GONE);
        assertThat(lost.get(broken).get(60, TimeUnit.SECONDS).reason()).isEqualTo(LeaseLostException.Reason.BROKEN);
        assertThat(lost.get(taken).get(60, TimeUnit.SECONDS).reason()).isEqualTo(LeaseLostException.Reason.TAKEN_OVER);
        assertThat(lost.get(takenAndReleased).get(60, TimeUnit.SECONDS).reason()).isEqualTo(LeaseLostException.Reason.TAKEN_OVER);
        // the others share those statements and are renewed on, untouched
        Map<String, Integer> seen = events.renewed();
        events.await("two more renewals of every other lease", () -> held.stream()
                .filter(l -> l != gone && l != broken && l != taken && l != takenAndReleased)
                .allMatch(l -> events.renewed().getOrDefault(l.key(), 0) >= seen.getOrDefault(l.key(), 0) + 2));
        for (Lease l : held) {
            boolean hit = l == gone || l == broken || l == taken || l == takenAndReleased;
            assertThat(l.isValid()).as(l.key()).isEqualTo(!hit);
            assertThat(lost.get(l).isDone()).as(l.key()).isEqualTo(hit);
        }
        held.stream().filter(Lease::isValid).forEach(Lease::release);
    }

    @Test
    void aFailedBatchStatementIsAFailedRenewalOfEachLeaseAndTheyRecover() throws Exception {
        LockManager m = manager("&timeout=1s");
        List<Lease> held = hold(m, 20, LeaseOptions.ttl(Duration.ofMinutes(2)).withHeartbeat(Duration.ofMillis(500)));
        try (Connection admin = PgTestSupport.jdbc(PgTestSupport.uri())) {
            admin.setAutoCommit(false);
            // blocks every UPDATE of the table (reads go on) until the rollback: each renewal statement times out
            execute(admin, "LOCK TABLE " + PgTestSupport.LEASE_TABLE + " IN EXCLUSIVE MODE");
            events.await("a failed renewal of every lease", () -> held.stream().allMatch(l -> events.failed.containsKey(l.key())));
            admin.rollback();
        }
        Map<String, Integer> seen = events.renewed();
        events.await("a renewal of every lease after the failures", () -> held.stream()
                .allMatch(l -> events.renewed().getOrDefault(l.key(), 0) > seen.getOrDefault(l.key(), 0)));
        assertThat(held).allMatch(Lease::isValid);
        held.forEach(Lease::release);
    }

    private static void execute(Connection c, String sql, String... params) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            for (int i = 0; i < params.length; i++) ps.setString(i + 1, params[i]);
            ps.execute();
        }
    }
}
