package dev.latchkey.postgres.shared;

import dev.latchkey.LockBackendException;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Function;
import org.postgresql.core.BaseConnection;

/**
 * A tiny pool of idle connections. Nothing is validated on borrow (that would cost a round trip
 * per call); instead a caller that saw its connection fail hands it back as broken, and because a
 * failed connection usually means a restarted or unreachable server, every idle connection is
 * dropped with it — the next call connects afresh, so the client recovers without a restart. A
 * session idle for nearly as long as the server lets it be ({@code idle_session_timeout} of the
 * database or role, read when it connects) is closed instead of handed out: the server is about to
 * end it, or has. Every connection sets {@code client_connection_check_interval} = 1 s (PostgreSQL
 * 14+): a statement still running when its client has gone (timed out, died) ends within a second
 * instead of finishing for nobody — taking a lock, or landing a write.
 *
 * <p><b>Connections from an application's {@code DataSource}</b> ({@code PostgresLocks}) are kept
 * the same way: one taken is ours until we let it go, and letting it go ends its server session
 * ({@link #closeQuietly} closes the driver's physical connection, not only the pool's wrapper), so a
 * session that may still hold an advisory lock, or carries a lease's timeouts, never returns to the
 * application's pool. A connection that arrives holding an advisory lock already (a pool that hands
 * out sessions it did not end) is refused, so a session's re-entrant advisory locks can never let
 * two leases share one key.
 */
public final class PgPool<S extends PgSession> implements AutoCloseable {
    /** Runs the driver's abort/timeout work inline: nothing of ours needs another thread. */
    private static final Executor INLINE = Runnable::run;
    /** A session this close to the server's idle limit is not handed out (the server's timer is not exact). */
    private static final long IDLE_LIMIT_SLACK_NANOS = TimeUnit.MILLISECONDS.toNanos(250);

    private final PgSettings settings;
    private final int maxIdle;
    private final Function<Connection, S> sessions;
    /** Guards {@code idle} and {@code closed}; never held during I/O. */
    private final ReentrantLock idleLock = new ReentrantLock();
    private final Deque<S> idle = new ArrayDeque<>();
    private boolean closed;

    PgPool(PgSettings settings, int maxIdle, Function<Connection, S> sessions) {
        this.settings = settings;
        this.maxIdle = maxIdle;
        this.sessions = sessions;
    }

    /** An open session in autocommit mode (after {@link #close} a fresh one, never pooled again). */
    public S borrow() {
        while (true) {
            S s;
            idleLock.lock();
            try {
                s = idle.pollFirst();
            } finally {
                idleLock.unlock();
            }
            if (s == null) break;
            long limit = s.serverIdleLimitNanos;
            if (limit <= 0 || System.nanoTime() - s.idleSinceNanos < limit - IDLE_LIMIT_SLACK_NANOS) return s;
            closeQuietly(s.connection); // the server ends (or ended) it for idleness
        }
        Opened opened = open(settings);
        S s = sessions.apply(opened.connection);
        s.serverIdleLimitNanos = opened.serverIdleLimitNanos;
        return s;
    }

    /** A new connection, set up for our statements (the listener's own session). */
    public Connection open() {
        return connect(settings);
    }

    /**
     * A new connection to {@code settings}' server, set up as every connection of this backend is
     * (also for the floors {@code latchkey bench} measures beside it); errors name the endpoint only.
     */
    public static Connection connect(PgSettings settings) {
        return open(settings).connection;
    }

    /** A connection set up by {@link #connect}, and the idle limit its server session has. */
    private record Opened(Connection connection, long serverIdleLimitNanos) {}

    private static Opened open(PgSettings settings) {
        Connection c = null;
        try {
            c = settings.newConnection();
            long idleLimitMillis;
            long advisoryLocksHeld;
            try (Statement s = c.createStatement();
                 // fencing tokens are handed out only once their commit is durable: a server whose
                 // default is synchronous_commit=off must not lose them in a crash (see README)
                 ResultSet rs = s.executeQuery("SELECT CASE WHEN current_setting('synchronous_commit') = 'off'"
                         + " THEN set_config('synchronous_commit', 'local', false) END,"
                         // a statement still running when its client has gone (timed out, died) ends within a
                         // second rather than finishing — and taking a lock, or landing a write, for nobody
                         + " (SELECT set_config(name, '1s', false) FROM pg_settings WHERE name = 'client_connection_check_interval'),"
                         // what the database or role sets (NULL before PostgreSQL 14)
                         + " extract(epoch FROM current_setting('idle_session_timeout', true)::interval) * 1000,"
                         // a session from an application's pool that still holds an advisory lock would
                         // re-grant it to us (they are re-entrant per session): such a session is refused
                         + " (SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid())")) {
                rs.next();
                idleLimitMillis = rs.getLong(3);
                advisoryLocksHeld = rs.getLong(4);
            }
            if (advisoryLocksHeld > 0) {
                throw new LockBackendException("PostgreSQL at " + settings.endpoint + ": a new connection's session already holds "
                        + advisoryLocksHeld + " advisory lock(s); the pool hands out sessions it did not end (reset them with"
                        + " DISCARD ALL or pg_advisory_unlock_all() on return, or give latchkey a data source of its own)", false);
            }
            c.setNetworkTimeout(INLINE, (int) settings.timeout.toMillis());
            return new Opened(c, TimeUnit.MILLISECONDS.toNanos(idleLimitMillis));
        } catch (SQLException e) {
            closeQuietly(c);
            throw PgErrors.translate(settings, "connecting", e);
        } catch (RuntimeException e) {
            closeQuietly(c);
            throw e;
        }
    }

    /** Closes a session whose state is unknown (it may still hold a session lock). */
    public void discard(S s) {
        closeQuietly(s.connection);
    }

    /**
     * Takes a session back. {@code broken=true} (after a connection failure) closes it and every
     * idle one; else it is kept for reuse if there is room.
     */
    public void giveBack(S s, boolean broken) {
        if (broken) {
            closeQuietly(s.connection);
            drainIdle();
            return;
        }
        idleLock.lock();
        try {
            if (!closed && idle.size() < maxIdle) {
                s.idleSinceNanos = System.nanoTime();
                idle.addFirst(s);
                return;
            }
        } finally {
            idleLock.unlock();
        }
        closeQuietly(s.connection);
    }

    /** Sets how long one call on {@code c} may take before the driver gives up (and closes it). */
    public static void networkTimeout(Connection c, long millis) throws SQLException {
        c.setNetworkTimeout(INLINE, (int) Math.min(Integer.MAX_VALUE, Math.max(1, millis)));
    }

    private void drainIdle() {
        Deque<S> dropped;
        idleLock.lock();
        try {
            dropped = new ArrayDeque<>(idle);
            idle.clear();
        } finally {
            idleLock.unlock();
        }
        dropped.forEach(s -> closeQuietly(s.connection));
    }

    /**
     * Ends {@code c}'s server session: closes the driver's physical connection first (a pooling
     * data source's wrapper would only return the session, with its locks, to the pool), then the
     * wrapper, which the pool then drops as closed.
     */
    public static void closeQuietly(Connection c) {
        if (c == null) return;
        try {
            c.unwrap(BaseConnection.class).close();
        } catch (SQLException | RuntimeException ignored) {
            // not a PgJDBC connection underneath (nothing we open), or already closed
        }
        try {
            c.close();
        } catch (SQLException | RuntimeException ignored) {
            // closing is best effort: the server ends the session when the socket goes
        }
    }

    /** Runs {@code work} on a pooled connection, translating failures. */
    public <T> T call(String action, SqlWork<T> work) {
        return callSession(action, s -> work.run(s.connection));
    }

    /** {@link #call}, handing {@code work} the pooled session itself. */
    public <T> T callSession(String action, SessionWork<S, T> work) {
        S s = borrow();
        boolean broken = true;
        try {
            T result = work.run(s);
            broken = false;
            return result;
        } catch (SQLException e) {
            broken = PgErrors.connectionLost(e) || isClosed(s.connection);
            throw PgErrors.translate(settings, action, e);
        } finally {
            giveBack(s, broken);
        }
    }

    public static boolean isClosed(Connection c) {
        try {
            return c.isClosed();
        } catch (SQLException e) {
            return true;
        }
    }

    @Override
    public void close() {
        idleLock.lock();
        try {
            closed = true;
        } finally {
            idleLock.unlock();
        }
        drainIdle();
    }

    /** A unit of JDBC work on a session. */
    @FunctionalInterface
    public interface SessionWork<S, T> {
        T run(S session) throws SQLException;
    }

    /** A unit of JDBC work. */
    @FunctionalInterface
    public interface SqlWork<T> {
        T run(Connection c) throws SQLException;
    }
}
