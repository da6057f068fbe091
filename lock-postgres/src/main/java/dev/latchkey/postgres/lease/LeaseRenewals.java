package dev.latchkey.postgres.lease;

import dev.latchkey.LeaseLostException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The renewals of one {@code mode=lease} manager, batched: one statement per heartbeat tick renews
 * every lease of the manager that is due, however many it holds (a second one, only when some were
 * not renewed, reads why).
 *
 * <p><b>Guarantee.</b> Each lease's outcome is exactly what the store did to its row, by the same
 * rules as a statement of its own: the {@code UPDATE} is conditional on the key <em>and</em> the lease
 * id and sets {@code expires_at} by the server's {@code clock_timestamp()} plus that lease's TTL
 * (leases of different TTLs share it), and it commits durably. A lease the statement returned
 * landed, and its validity counts from the send of that statement; a lease it did not return no longer
 * owns its row and is lost, for the reason its row gives (gone, force-released, taken over); when the
 * statement failed, or its reply was lost, nothing landed as far as any lease knows — each lease
 * that was waiting for it gets the failure as its own failed renewal (retried as
 * {@link dev.latchkey.spi.ManagedLease} retries), and one whose outcome is unknown is remembered as
 * such, so its withdrawal covers what the statement may have added ({@link TableLease}).
 *
 * <p><b>Which leases a statement carries.</b> The lease whose heartbeat sends it, every lease waiting
 * for a renewal, and every other held lease with a heartbeat whose last landed write is half a
 * heartbeat old or more. Renewing those a little early only moves their validity later, and it puts
 * their next heartbeats at the same instant: after a tick or two every lease of the manager is
 * renewed by one statement. At most one statement is in flight per manager; a renewal that finds one
 * in flight waits for it (it may carry its lease) and then sends the next for everyone still waiting.
 * A lease that a statement renewed early learns its outcome at once, on a renewer, through its own
 * {@link TableLease#renew()} (or through its own heartbeat, if that is due by then), so its local
 * validity, events and next heartbeat are as if it had sent the statement itself. A failure is not pushed to a lease that was not waiting: it keeps the failure
 * for its own next renewal, unless a later statement carries it first.
 */
final class LeaseRenewals {
    private final LeaseTableLockManager manager;
    private final String renewSql;
    private final String currentSql;
    /** The leases held, renewed or not: every one a statement may carry. */
    private final Set<TableLease> held = ConcurrentHashMap.newKeySet();
    /** Guards {@code inFlight}, {@code carried} and each lease's {@code outcome} and {@code waiting}; never held during I/O. */
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition done = lock.newCondition();
    private boolean inFlight;
    private Set<TableLease> carried = Set.of();

    /** What the last statement that carried a lease, with {@code ttlNanos}, said about it: landed ({@code error} null), lost, or failed. */
    record Outcome(long sentNanos, long ttlNanos, RuntimeException error) {
        boolean failed() {
            return error != null && !(error instanceof LeaseLostException);
        }
    }

    LeaseRenewals(LeaseTableLockManager manager, String table) {
        this.manager = manager;
        renewSql = "UPDATE " + table + " AS l SET expires_at = clock_timestamp() + w.ttl_ms::float8 * interval '1 millisecond'"
                + " FROM unnest(?::text[], ?::text[], ?::int8[]) AS w(key, lease_id, ttl_ms)"
                + " WHERE l.key = w.key AND l.lease_id = w.lease_id RETURNING l.lease_id";
        currentSql = "SELECT w.key, " + LeaseTableLockManager.ROW_NOW
                + " FROM unnest(?::text[]) AS w(key) LEFT JOIN " + table + " l ON l.key = w.key";
    }

    void add(TableLease lease) {
        held.add(lease);
    }

    /** The lease is released or lost: no statement carries it from now on. */
    void remove(TableLease lease) {
        held.remove(lease);
    }

    /**
     * One renewal of {@code lease} by {@code ttl} ({@link TableLease#renewInStore}): the outcome of
     * the statement that carried it since its last renewal, else of the next one, sent now if none is
     * in flight. A statement that renewed it by another TTL (sent before {@link TableLease#renew(Duration)}
     * changed it) does not count: the next one writes {@code ttl}.
     *
     * @return when the statement that renewed the lease was sent
     */
    long renew(TableLease lease, Duration ttl) {
        List<TableLease> batch = new ArrayList<>();
        lock.lock();
        try {
            lease.waiting = true;
            while (true) {
                // a statement in flight may carry this lease; one that does not is followed by ours
                while (inFlight && (lease.outcome == null || carried.contains(lease))) done.awaitUninterruptibly();
                Outcome o = lease.outcome;
                if (o == null) break;
                if (o.error() != null || o.ttlNanos() == ttl.toNanos()) {
                    lease.waiting = false;
                    return take(lease);
                }
                lease.outcome = null; // it renewed by the TTL before renew(Duration) changed it: not this renewal
            }
            collect(lease, batch);
            inFlight = true;
            carried = new HashSet<>(batch);
        } finally {
            lock.unlock();
        }
        Map<TableLease, Outcome> outcomes = null;
        List<TableLease> toTell = new ArrayList<>();
        Outcome mine = null;
        try {
            outcomes = send(batch); // catches what it can; an Error still frees the next statement below
        } finally {
            lock.lock();
            try {
                if (outcomes != null) {
                    outcomes.forEach((l, o) -> {
                        l.outcome = o; // collect() carried only leases without a newer outcome
                        l.recordInStore(o);
                        if (o.error() instanceof LeaseLostException) held.remove(l);
                        if (!l.waiting && !o.failed()) toTell.add(l);
                    });
                }
                mine = lease.outcome;
                lease.outcome = null;
                lease.waiting = false;
                inFlight = false;
                carried = Set.of();
                done.signalAll();
            } finally {
                lock.unlock();
            }
        }
        // a lease renewed early learns it now, through its own renew(), on a renewer
        for (TableLease l : toTell) manager.runtime.execute(() -> tell(l));
        if (mine.error() != null) throw mine.error();
        return mine.sentNanos();
    }

    /** Under {@code lock}: the lease's outcome, consumed. */
    private static long take(TableLease lease) {
        Outcome o = lease.outcome;
        lease.outcome = null;
        if (o.error() != null) throw o.error();
        return o.sentNanos();
    }

    /** Under {@code lock}: the leases the next statement carries ({@code first}, then as the class says). */
    private void collect(TableLease first, List<TableLease> batch) {
        batch.add(first);
        long now = manager.context.time().nanoTime();
        for (TableLease l : held) {
            if (l == first) continue;
            boolean stale = l.outcome == null || l.outcome.failed();
            long heartbeat = l.heartbeatNanos();
            boolean due = heartbeat > 0 && now - l.landedSentNanos() >= heartbeat / 2;
            if (stale && (l.waiting || due)) batch.add(l);
        }
    }

    /**
     * Hands a landed or lost outcome to a lease that was not waiting for it: nothing if it took it
     * meanwhile, or if its own heartbeat is due (it may be queued already and takes it then; were it
     * told too, that heartbeat would find nothing to take and send a statement of its own).
     */
    private void tell(TableLease lease) {
        lock.lock();
        try {
            if (lease.outcome == null || lease.heartbeatDue(manager.context.time().nanoTime())) return;
        } finally {
            lock.unlock();
        }
        try {
            lease.renew();
        } catch (RuntimeException e) {
            // lost (recorded and signalled by the lease itself) or released meanwhile
        }
    }

    /** The statement, and for each lease what it said. */
    private Map<TableLease, Outcome> send(List<TableLease> batch) {
        String[] keys = new String[batch.size()];
        String[] leaseIds = new String[batch.size()];
        Long[] ttls = new Long[batch.size()];
        for (int i = 0; i < keys.length; i++) {
            TableLease l = batch.get(i);
            keys[i] = l.key();
            leaseIds[i] = l.leaseId();
            ttls[i] = l.ttl().toMillis();
        }
        Map<TableLease, Outcome> out = new HashMap<>();
        long sent = manager.context.time().nanoTime();
        Set<String> renewed;
        try {
            renewed = manager.pool.call(batch.size() == 1 ? "renewing the lease on '" + keys[0] + "'"
                    : "renewing " + batch.size() + " leases", c -> update(c, keys, leaseIds, ttls));
        } catch (RuntimeException e) {
            for (int i = 0; i < ttls.length; i++) out.put(batch.get(i), new Outcome(sent, ttlNanos(ttls[i]), e));
            return out;
        }
        List<TableLease> absent = new ArrayList<>();
        Map<TableLease, Long> ttlOf = new HashMap<>();
        for (int i = 0; i < ttls.length; i++) {
            TableLease l = batch.get(i);
            ttlOf.put(l, ttlNanos(ttls[i]));
            if (renewed.contains(l.leaseId())) out.put(l, new Outcome(sent, ttlOf.get(l), null));
            else absent.add(l);
        }
        if (absent.isEmpty()) return out;
        try {
            Map<String, LeaseTableLockManager.RowNow> now = manager.pool.call("reading " + absent.size() + " lock rows",
                    c -> current(c, absent.stream().map(TableLease::key).distinct().toArray(String[]::new)));
            for (TableLease l : absent) out.put(l, new Outcome(sent, ttlOf.get(l), LeaseTableLockManager.lost(l, "renew", now.get(l.key()))));
        } catch (RuntimeException e) {
            // not renewed, but why is unknown: a failed renewal, so the next one asks again
            absent.forEach(l -> out.put(l, new Outcome(sent, ttlOf.get(l), e)));
        }
        return out;
    }

    private static long ttlNanos(long millis) {
        return TimeUnit.MILLISECONDS.toNanos(millis);
    }

    private Set<String> update(Connection c, String[] keys, String[] leaseIds, Long[] ttls) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(renewSql)) {
            ps.setArray(1, c.createArrayOf("text", keys));
            ps.setArray(2, c.createArrayOf("text", leaseIds));
            ps.setArray(3, c.createArrayOf("int8", ttls));
            Set<String> renewed = new HashSet<>();
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) renewed.add(rs.getString(1));
            }
            return renewed;
        }
    }

    private Map<String, LeaseTableLockManager.RowNow> current(Connection c, String[] keys) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(currentSql)) {
            ps.setArray(1, c.createArrayOf("text", keys));
            Map<String, LeaseTableLockManager.RowNow> now = new HashMap<>();
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) now.put(rs.getString(1), LeaseTableLockManager.RowNow.read(rs, 2));
            }
            return now;
        }
    }
}
