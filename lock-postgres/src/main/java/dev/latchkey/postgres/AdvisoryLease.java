package dev.latchkey.postgres;

import dev.latchkey.LeaseLostException;
import dev.latchkey.LeaseLostException.Reason;
import dev.latchkey.LeaseOptions;
import dev.latchkey.spi.ManagedLease;
import java.lang.System.Logger.Level;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;

/**
 * A lease of {@code mode=advisory}: the lock lives as long as the pinned session.
 *
 * <p><b>Guarantee.</b> Renewal proves that the pinned session still holds the lock (one query to
 * {@code pg_locks}); if the session is gone (terminated, server restarted, network failure) the
 * lease is lost at once, since the server has freed the lock. If renewals stop succeeding, the
 * lease turns invalid at its deadline (a margin before the TTL) and the session is closed when the
 * full TTL has passed, so the server frees the lock then: not earlier, and not much later. Release unlocks and returns the connection to the pool; a
 * release that fails mid-way closes the connection, which frees the lock too. The manager's
 * background write of the holder row ({@code fencing=false}) uses the session only while the lease
 * holds it: never after release has given the connection back.
 */
final class AdvisoryLease extends ManagedLease {
    private static final System.Logger LOG = System.getLogger(AdvisoryLease.class.getName());

    private final AdvisoryLockManager manager;
    private final Connection session;
    private final long lockId;
    private final LeaseOptions options;
    private final long grantedNanos;
    /** Keeps the background row write, renewal and release off the session at the same time. */
    private final Object sessionUse = new Object();
    /** Set (under {@link #sessionUse}) when release takes the session back. */
    private boolean released;
    /** When the session is closed if the lease is lost by running out: a full TTL after grant or renewal. */
    private volatile long sessionEndNanos;

    AdvisoryLease(AdvisoryLockManager manager, Connection session, long lockId, String key, String leaseId,
                  long token, LeaseOptions options, long grantedNanos) {
        // the server never expires a session lock: validity counts from when it was granted
        super(manager.runtime, key, leaseId, token, options, grantedNanos);
        this.manager = manager;
        this.session = session;
        this.lockId = lockId;
        this.options = options;
        this.grantedNanos = grantedNanos;
        this.sessionEndNanos = grantedNanos + options.ttl().toNanos();
        start();
    }

    long lockId() {
        return lockId;
    }

    /** Writes the holder row while the session still holds the lock; a failure only leaves the row unwritten. */
    void recordHolder() {
        synchronized (sessionUse) {
            if (released) return;
            try {
                manager.writeHolder(session, this, options, manager.context.time().nanoTime() - grantedNanos);
            } catch (SQLException e) {
                LOG.log(Level.DEBUG, () -> "could not record the holder of '" + key() + "' (inspect shows its session only): " + e);
            }
        }
    }

    @Override
    protected long renewInStore(Duration ttl, long sent) {
        synchronized (sessionUse) {
            renewOnSession(ttl, sent);
        }
        return sent;
    }

    private void renewOnSession(Duration ttl, long sent) {
        try (PreparedStatement ps = session.prepareStatement("SELECT EXISTS (SELECT 1 FROM pg_locks"
                + " WHERE locktype = 'advisory' AND granted AND objsubid = 1 AND pid = pg_backend_pid()"
                + " AND classid::int8 = ? AND objid::int8 = ?)")) {
            ps.setLong(1, lockId >>> 32);
            ps.setLong(2, lockId & 0xffffffffL);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                if (!rs.getBoolean(1)) {
                    throw new LeaseLostException(Reason.SESSION_ENDED, "lease on '" + key() + "': the session no longer holds the advisory lock");
                }
            }
            sessionEndNanos = sent + ttl.toNanos();
        } catch (SQLException e) {
            throw lostOr(e, "renewing");
        }
    }

    @Override
    protected void releaseInStore() {
        synchronized (sessionUse) {
            released = true;
            releaseOnSession();
        }
    }

    private void releaseOnSession() {
        boolean held;
        try (PreparedStatement ps = session.prepareStatement(manager.release)) {
            ps.setLong(1, lockId);
            ps.setString(2, manager.idleName);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                held = rs.getBoolean(1);
            }
        } catch (SQLException e) {
            RuntimeException failure = lostOr(e, "releasing");
            manager.pool.discard(session); // closing the session frees the lock in any case
            if (failure instanceof LeaseLostException) throw failure;
            return;
        }
        if (!held) {
            manager.pool.discard(session);
            throw new LeaseLostException(Reason.SESSION_ENDED, "lease on '" + key() + "' was no longer held by its session");
        }
        manager.pool.giveBack(session, false);
    }

    /** A dead session means the server already freed the lock: the lease is lost, not merely unrenewed. */
    private RuntimeException lostOr(SQLException e, String action) {
        if (PgErrors.connectionLost(e) || PgPool.isClosed(session)) {
            return new LeaseLostException(Reason.SESSION_ENDED, "lease on '" + key() + "': its database session ended ("
                    + e.getMessage() + "); the server has freed the lock", e);
        }
        return PgErrors.translate(manager.settings, action + " the lease on '" + key() + "'", e);
    }

    /**
     * A dead session is closed at once. A lease that ran out unrenewed turned invalid a safety
     * margin before its TTL; its session (and so the lock) is kept until the full TTL has passed,
     * so no contender gets the key earlier than the TTL promises.
     */
    @Override
    protected void onLost(LeaseLostException cause) {
        long delay = sessionEndNanos - manager.context.time().nanoTime();
        // Closing a session is I/O: never on the heartbeat timer itself.
        runtime().later(Duration.ofNanos(Math.max(0, delay)), () -> manager.pool.discard(session));
    }
}
