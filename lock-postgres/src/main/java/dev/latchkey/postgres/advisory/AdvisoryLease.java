package dev.latchkey.postgres.advisory;

import dev.latchkey.LeaseLostException;
import dev.latchkey.LeaseLostException.Reason;
import dev.latchkey.LeaseOptions;
import dev.latchkey.postgres.shared.PgErrors;
import dev.latchkey.postgres.shared.PgPool;
import dev.latchkey.spi.ManagedLease;
import java.lang.System.Logger.Level;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLWarning;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import org.postgresql.PGConnection;

/**
 * A lease of {@code mode=advisory}: the lock lives as long as the pinned session.
 *
 * <p><b>Guarantee.</b> The lease is valid only while its session can hold the lock. Renewal proves
 * that the pinned session still holds it (one query to {@code pg_locks}, which also restarts the
 * server's idle timer of the session, see {@link AdvisorySessions}); if the session is gone
 * (terminated, server restarted, network failure) the lease is lost at once, since the server has
 * freed the lock. Between renewals {@link SessionWatch} reads what the server sent on the idle
 * session, so a session the server ended with a word is found within a quarter second. If renewals
 * stop succeeding, the lease turns invalid at its deadline (a margin before the TTL) and the session
 * is closed when the full TTL has passed, so the server frees the lock then: not earlier, and not
 * much later; a holder that cannot close it (frozen, cut off) has it ended by the server's idle
 * limit, TTL/5 later. Nothing else on the client ends the session early: the driver closes a
 * connection whose reply is later than its network timeout, so every statement of the held lease
 * (renewal, row write) may wait for its reply until that same end of the session, whatever
 * {@code timeout} says — a renewal that hangs keeps the lock, and the lease, alive, and one that
 * lands late still counts. Release unlocks and returns the connection to the pool, under
 * {@code timeout} again (a release whose reply is late ends the session, which frees the lock too,
 * as the caller asked); a release that fails mid-way closes the connection, which frees the lock
 * too. The manager's background write of the
 * holder row ({@code fencing=false}) uses the session only while the lease holds it: never after
 * release has given the connection back.
 */
final class AdvisoryLease extends ManagedLease {
    private static final System.Logger LOG = System.getLogger(AdvisoryLease.class.getName());

    private final AdvisoryLockManager manager;
    private final AdvisorySession session;
    private final long lockId;
    private final LeaseOptions options;
    /** When the lease's validity started: the try's send time, or a wait's grant. */
    private final long validFromNanos;
    /** Keeps the background row write, renewal, release and session check off the session at the same time. */
    private final ReentrantLock sessionUse = new ReentrantLock();
    /** Set (under {@link #sessionUse}) when release takes the session back. */
    private boolean released;
    /** The lease has ended (released or lost): {@link SessionWatch} drops it. */
    private volatile boolean done;
    /** What the server said when it ended the session, as {@link #checkSession} read it; null while it lives. */
    private volatile String endedBy;
    /** When the session is closed if the lease is lost by running out: a full TTL after grant or renewal. */
    private volatile long sessionEndNanos;

    /**
     * @param validFromNanos when the request that took the lock was sent (a try), or when its grant
     *                       arrived (a wait, which may have been sent long before)
     */
    AdvisoryLease(AdvisoryLockManager manager, AdvisorySession session, long lockId, String key, String leaseId,
                  long token, LeaseOptions options, long validFromNanos) {
        super(manager.runtime, key, leaseId, token, options, validFromNanos);
        this.manager = manager;
        this.session = session;
        this.lockId = lockId;
        this.options = options;
        this.validFromNanos = validFromNanos;
        this.sessionEndNanos = validFromNanos + options.ttl().toNanos();
        start();
        manager.watch.add(this);
    }

    long lockId() {
        return lockId;
    }

    /** Writes the holder row while the session still holds the lock; a failure only leaves the row unwritten. */
    void recordHolder() {
        sessionUse.lock();
        try {
            if (released) return;
            untilSessionEnd();
            manager.writeHolder(session.connection, this, options.withTtl(ttl()), manager.context.time().nanoTime() - validFromNanos);
        } catch (SQLException e) {
            LOG.log(Level.DEBUG, () -> "could not record the holder of '" + key() + "' (inspect shows its session only): " + e);
        } finally {
            sessionUse.unlock();
        }
    }

    /**
     * For {@link SessionWatch}: reads, without blocking, whatever the server sent on the idle session.
     * A server ends a session with an error (terminated, idle limit) or a warning (shutdown, crash of
     * another backend); anything else unasked for is checked by renewing now. Skipped while a renewal
     * or release uses the session: that finds out itself.
     *
     * @return false once the lease no longer needs watching (released, lost, or its session ended)
     */
    boolean checkSession() {
        if (!session.readsWithoutWaiting || done) return false;
        if (!sessionUse.tryLock()) return true;
        try {
            if (released || endedBy != null) return false;
            Connection c = session.connection;
            try {
                c.unwrap(PGConnection.class).getNotifications();
                SQLWarning w = c.getWarnings();
                if (w == null) return true;
                c.clearWarnings();
                if (w.getSQLState() != null && (w.getSQLState().startsWith("57P") || w.getSQLState().startsWith("08"))) {
                    endedBy = w.getMessage();
                }
            } catch (SQLException e) {
                endedBy = e.getMessage();
            }
        } finally {
            sessionUse.unlock();
        }
        runtime().execute(this::renewNow);
        return endedBy == null;
    }

    /** A renewal off the heartbeat's schedule: it reports a loss like any renewal, or renews. */
    private void renewNow() {
        try {
            renew();
        } catch (RuntimeException e) {
            // lost (recorded and signalled by renew), released meanwhile, or the store is slow: the heartbeat goes on
        }
    }

    @Override
    protected long renewInStore(Duration ttl, long sent) {
        sessionUse.lock();
        try {
            String ended = endedBy;
            if (ended != null) {
                throw new LeaseLostException(Reason.SESSION_ENDED, "lease on '" + key() + "': the server ended its"
                        + " database session (" + ended + "); the server has freed the lock");
            }
            renewOnSession(ttl, sent);
        } finally {
            sessionUse.unlock();
        }
        return sent;
    }

    @Override
    protected void checkTtl(Duration ttl) {
        AdvisoryLockManager.checkTtl(ttl);
    }

    private void renewOnSession(Duration ttl, long sent) {
        try {
            untilSessionEnd();
        } catch (SQLException e) {
            throw lostOr(e, "renewing");
        }
        try (PreparedStatement ps = session.connection.prepareStatement("SELECT EXISTS (SELECT 1 FROM pg_locks"
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
            if (session.limitsForTtlMillis != ttl.toMillis()) newTtl(ttl);
            sessionEndNanos = sent + ttl.toNanos();
        } catch (SQLException e) {
            throw lostOr(e, "renewing");
        }
    }

    /**
     * A TTL other than the session was set up for ({@link #renew(Duration)}): the schema's registry
     * covers it first (the restart guard waits out the longest TTL recorded), then the server's idle
     * limit of the session follows it, and the holder row says it, for {@code inspect}.
     */
    private void newTtl(Duration ttl) throws SQLException {
        manager.recordTtl(ttl);
        manager.sessions.limits(session, ttl);
        manager.writeHolder(session.connection, this, options.withTtl(ttl), manager.context.time().nanoTime() - validFromNanos);
    }

    /**
     * Lets the next statement on the held session wait for its reply until the session is due to end
     * ({@link #sessionEndNanos}: the lease's validity plus its margin). The driver closes a session
     * whose reply is later than the network timeout, and the server then frees the lock at once: with
     * {@code timeout} (5 s) one slow reply used to hand the key to a contender while this lease was
     * still valid. Under {@link #sessionUse}.
     */
    private void untilSessionEnd() throws SQLException {
        long left = sessionEndNanos - manager.context.time().nanoTime();
        PgPool.networkTimeout(session.connection, TimeUnit.NANOSECONDS.toMillis(left) + 1);
        session.stretched = true;
    }

    @Override
    protected void releaseInStore() {
        sessionUse.lock();
        try {
            released = true;
            releaseOnSession();
        } finally {
            sessionUse.unlock();
        }
    }

    private void releaseOnSession() {
        boolean held;
        try {
            if (session.stretched) {
                // a deliberate release may end the session when slow, and the pool's sessions carry `timeout`
                PgPool.networkTimeout(session.connection, manager.settings.timeout.toMillis());
                session.stretched = false;
            }
            try (PreparedStatement ps = session.connection.prepareStatement(manager.release)) {
                ps.setLong(1, lockId);
                ps.setString(2, manager.idleName);
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    held = rs.getBoolean(1);
                }
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
        if (PgErrors.connectionLost(e) || PgPool.isClosed(session.connection)) {
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
    protected void afterLoss(LeaseLostException cause) {
        done = true;
        long delay = cause.reason() == Reason.SESSION_ENDED ? 0 : sessionEndNanos - manager.context.time().nanoTime();
        // Closing a session is I/O: never on the heartbeat timer itself.
        runtime().later(Duration.ofNanos(Math.max(0, delay)), () -> manager.pool.discard(session));
    }

    @Override
    protected void afterRelease() {
        done = true;
    }
}
