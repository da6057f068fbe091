package dev.latchkey.postgres;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.concurrent.Executor;

/**
 * A tiny pool of idle connections. Nothing is validated on borrow (that would cost a round trip
 * per call); instead a caller that saw its connection fail hands it back as broken, and because a
 * failed connection usually means a restarted or unreachable server, every idle connection is
 * dropped with it — the next call connects afresh, so the client recovers without a restart.
 */
final class PgPool implements AutoCloseable {
    /** Runs the driver's abort/timeout work inline: nothing of ours needs another thread. */
    private static final Executor INLINE = Runnable::run;

    private final PgSettings settings;
    private final int maxIdle;
    private final Deque<Connection> idle = new ArrayDeque<>();
    private boolean closed;

    PgPool(PgSettings settings, int maxIdle) {
        this.settings = settings;
        this.maxIdle = maxIdle;
    }

    /** An open connection in autocommit mode (after {@link #close} a fresh one, never pooled again). */
    Connection borrow() {
        synchronized (this) {
            Connection c = idle.pollFirst();
            if (c != null) return c;
        }
        return open();
    }

    /** A new connection, set up for our statements (pooled later, or the listener's own session). */
    Connection open() {
        return connect(settings);
    }

    /**
     * A new connection to {@code settings}' server, set up as every connection of this backend is
     * (also for the floors {@code latchkey bench} measures beside it); errors name the endpoint only.
     */
    static Connection connect(PgSettings settings) {
        Connection c = null;
        try {
            c = DriverManager.getConnection(settings.jdbcUrl, settings.properties);
            try (Statement s = c.createStatement()) {
                // fencing tokens are handed out only once their commit is durable: a server whose
                // default is synchronous_commit=off must not lose them in a crash (see README)
                s.execute("SELECT CASE WHEN current_setting('synchronous_commit') = 'off'"
                        + " THEN set_config('synchronous_commit', 'local', false) END");
            }
            c.setNetworkTimeout(INLINE, (int) settings.timeout.toMillis());
            return c;
        } catch (SQLException e) {
            closeQuietly(c);
            throw PgErrors.translate(settings, "connecting", e);
        }
    }

    /** Closes a connection whose session state is unknown (it may still hold a session lock). */
    void discard(Connection c) {
        closeQuietly(c);
    }

    /**
     * Takes a connection back. {@code broken=true} (after a connection failure) closes it and every
     * idle one; else it is kept for reuse if there is room.
     */
    void giveBack(Connection c, boolean broken) {
        if (broken) {
            closeQuietly(c);
            drainIdle();
            return;
        }
        synchronized (this) {
            if (!closed && idle.size() < maxIdle) {
                idle.addFirst(c);
                return;
            }
        }
        closeQuietly(c);
    }

    /** Sets how long one call on {@code c} may take before the driver gives up (and closes it). */
    static void networkTimeout(Connection c, long millis) throws SQLException {
        c.setNetworkTimeout(INLINE, (int) Math.min(Integer.MAX_VALUE, Math.max(1, millis)));
    }

    private void drainIdle() {
        Deque<Connection> dropped;
        synchronized (this) {
            dropped = new ArrayDeque<>(idle);
            idle.clear();
        }
        dropped.forEach(PgPool::closeQuietly);
    }

    static void closeQuietly(Connection c) {
        if (c == null) return;
        try {
            c.close();
        } catch (SQLException | RuntimeException ignored) {
            // closing is best effort: the server ends the session when the socket goes
        }
    }

    /** Runs {@code work} on a pooled connection, translating failures. */
    <T> T call(String action, SqlWork<T> work) {
        Connection c = borrow();
        boolean broken = true;
        try {
            T result = work.run(c);
            broken = false;
            return result;
        } catch (SQLException e) {
            broken = PgErrors.connectionLost(e) || isClosed(c);
            throw PgErrors.translate(settings, action, e);
        } finally {
            giveBack(c, broken);
        }
    }

    static boolean isClosed(Connection c) {
        try {
            return c.isClosed();
        } catch (SQLException e) {
            return true;
        }
    }

    @Override
    public void close() {
        synchronized (this) {
            closed = true;
        }
        drainIdle();
    }

    /** A unit of JDBC work. */
    @FunctionalInterface
    interface SqlWork<T> {
        T run(Connection c) throws SQLException;
    }
}
