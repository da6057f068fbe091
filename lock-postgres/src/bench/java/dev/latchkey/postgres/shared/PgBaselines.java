package dev.latchkey.postgres.shared;

import dev.latchkey.bench.Baseline;
import dev.latchkey.bench.KeyClaims;
import dev.latchkey.spi.LockUri;
import java.security.SecureRandom;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.UUID;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The floors {@code latchkey bench postgres://…} measures beside this backend: the least PostgreSQL
 * work each mode could do per acquire+release, on connections made exactly as the backend makes
 * them ({@link PgPool#connect}: same URL, properties and session set-up; errors name the endpoint,
 * never a secret). Bench code: compiled from lock-postgres's {@code src/bench} into lock-bench-peers
 * and lock-postgres's own tests (found through {@code META-INF/services/dev.latchkey.bench.Baseline}
 * there), never into the lock-postgres jar.
 * <ul>
 *   <li>{@link SelectOne}: one round trip;</li>
 *   <li>{@link AdvisoryLock}: what {@code mode=advisory} is compared with, with a handoff; under
 *       contention beside every mode (the cheapest keyed lock PostgreSQL has);</li>
 *   <li>{@link TwoDurableCommits}: what {@code mode=lease} is compared with; under contention
 *       beside that mode.</li>
 * </ul>
 */
public final class PgBaselines {
    private PgBaselines() {}

    /** What the three floors share: schemes, kind, and a connection to the URI's server. */
    private abstract static class PgBaseline implements Baseline {
        @Override
        public final boolean supports(String scheme) {
            return scheme.equals("postgres") || scheme.equals("postgresql");
        }

        @Override
        public final Kind kind() {
            return Kind.FLOOR;
        }

        /** Connects as the backend does, then lets the floor prepare its session on that connection. */
        @Override
        public final Session open(LockUri uri) {
            PgSettings settings = PgSettings.parse(uri);
            Connection c = PgPool.connect(settings);
            try {
                return session(settings, c);
            } catch (SQLException e) {
                PgPool.closeQuietly(c);
                throw PgErrors.translate(settings, "preparing the floor '" + description() + "'", e);
            } catch (RuntimeException e) {
                PgPool.closeQuietly(c);
                throw e;
            }
        }

        abstract OneConnection session(PgSettings settings, Connection c) throws SQLException;

        /** Runs {@code ps} and returns its single boolean. */
        static boolean bool(PreparedStatement ps) throws SQLException {
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getBoolean(1);
            }
        }
    }

    /** A session on one connection; closing closes the connection (and so frees any session lock). */
    private abstract static class OneConnection implements Baseline.Session {
        final Connection c;
        private boolean closed;

        OneConnection(Connection c) {
            this.c = c;
        }

        /** Removes what the session created, before the connection closes. */
        void cleanUp() throws SQLException {}

        @Override
        public final void close() throws SQLException {
            if (closed) return;
            closed = true;
            try {
                cleanUp();
            } finally {
                PgPool.closeQuietly(c);
            }
        }
    }

    /**
     * {@code SELECT 1}: one round trip (acquire), nothing on release. Not measured under contention:
     * it takes no key, so a busy key could only come from the bench's own claims, and the raw
     * advisory floor already measures the same loop on this server at two cheap statements per
     * round on key i's own lock id; a third PostgreSQL floor row would cost every run a warm-up and
     * a measuring time and say nothing that row does not.
     */
    public static final class SelectOne extends PgBaseline {
        @Override
        public String description() {
            return "SELECT 1";
        }

        @Override
        OneConnection session(PgSettings settings, Connection c) throws SQLException {
            PreparedStatement select = c.prepareStatement("SELECT 1");
            return new OneConnection(c) {
                @Override
                public void acquire() throws SQLException {
                    try (ResultSet rs = select.executeQuery()) {
                        rs.next();
                    }
                }

                @Override
                public void release() {}
            };
        }
    }

    /**
     * {@code pg_try_advisory_lock} + {@code pg_advisory_unlock} on one pinned connection: two round
     * trips, as {@code mode=advisory} without its holder row. The handoff waits in a blocking
     * {@code pg_advisory_lock}. All sessions of one object lock the same 64-bit id, drawn at random
     * per object so that concurrent benches do not meet (under contention, the K ids from it).
     */
    public static final class AdvisoryLock extends PgBaseline {
        /** The advisory lock id of every session of this object. */
        final long id = new SecureRandom().nextLong();

        @Override
        public String description() {
            return "pg_try_advisory_lock + pg_advisory_unlock";
        }

        @Override
        public boolean hasHandoff() {
            return true;
        }

        /**
         * Under contention, beside every mode, key i of the K keys is lock id {@code id + i}: a lock
         * id another session holds is busy, as a held key is for the lock.
         */
        @Override
        public boolean hasSpread(LockUri uri) {
            return true;
        }

        @Override
        OneConnection session(PgSettings settings, Connection c) throws SQLException {
            PreparedStatement tryLock = c.prepareStatement("SELECT pg_try_advisory_lock(?)");
            PreparedStatement lock = c.prepareStatement("SELECT true FROM pg_advisory_lock(?)");
            PreparedStatement unlock = c.prepareStatement("SELECT pg_advisory_unlock(?)");
            tryLock.setLong(1, id);
            lock.setLong(1, id);
            unlock.setLong(1, id);
            return new OneConnection(c) {
                @Override
                public void acquire() throws SQLException {
                    if (!bool(tryLock)) throw new IllegalStateException("floor advisory lock " + id + " unexpectedly held");
                }

                @Override
                public void acquireWaiting() throws SQLException {
                    bool(lock);
                }

                @Override
                public void release() throws SQLException {
                    if (!bool(unlock)) throw new IllegalStateException("floor advisory lock " + id + " unexpectedly lost");
                }

                @Override
                public boolean tryRound(int key) throws SQLException {
                    tryLock.setLong(1, id + key);
                    unlock.setLong(1, id + key);
                    try {
                        if (!bool(tryLock)) return false;
                        if (!bool(unlock)) throw new IllegalStateException("floor advisory lock " + (id + key) + " unexpectedly lost");
                        return true;
                    } finally {
                        tryLock.setLong(1, id);
                        unlock.setLong(1, id);
                    }
                }
            };
        }
    }

    /**
     * Two autocommit {@code UPDATE}s of one row, each a durable commit (as the backend's
     * connections commit): what {@code mode=lease} does at least, once to acquire and once to
     * release. The sessions of one object share one table, created in the URI's schema under a
     * unique name by the first session to open and dropped by the last to close; the latency
     * rounds update its row {@code -1} (one session at a time: this floor has no handoff).
     *
     * <p>Under contention, beside {@code mode=lease} only (the mode it is the floor of), key i is
     * row i of that table, as the lease rows of one table are the lock's keys: a round claims the
     * key among the object's sessions ({@link KeyClaims}: a key another thread claimed is busy, and
     * no two threads update one row at once, which would measure the row lock's queue) and makes
     * its two commits on it. A key's first round inserts its row: an {@code UPDATE} that finds no
     * row commits nothing durable, then the {@code INSERT} is the round's first commit.
     */
    public static final class TwoDurableCommits extends PgBaseline {
        private static final int LATENCY_ROW = -1;
        private final String tableName =
                "latchkey_bench_floor_" + UUID.randomUUID().toString().replace("-", "").substring(0, 16);
        private final KeyClaims claims = new KeyClaims();
        /** Guards {@code open}; a lock, not a monitor, as everywhere in main sources (it is held during I/O). */
        private final ReentrantLock tableLock = new ReentrantLock();
        /** Open sessions; the first creates the table, the last to close drops it. */
        private int open;

        @Override
        public String description() {
            return "two single-row durable commits";
        }

        @Override
        public boolean hasSpread(LockUri uri) {
            return PgSettings.parse(uri).mode == PgSettings.Mode.LEASE;
        }

        @Override
        OneConnection session(PgSettings settings, Connection c) throws SQLException {
            String table = settings.schema + "." + PgSettings.quote(tableName);
            PreparedStatement update = c.prepareStatement("UPDATE " + table + " SET v = v + 1 WHERE id = ?");
            PreparedStatement insert = c.prepareStatement("INSERT INTO " + table + " VALUES (?, 0)");
            tableLock.lock();
            try {
                if (open == 0) {
                    try (Statement st = c.createStatement()) {
                        // the URI's schema may be one the lock has not created yet (it does on first use)
                        if (!settings.schemaName.equals("public")) st.execute("CREATE SCHEMA IF NOT EXISTS " + settings.schema);
                        // one implicit transaction: a failed insert leaves no table behind
                        st.execute("CREATE TABLE " + table + " (id int PRIMARY KEY, v bigint NOT NULL);"
                                + " INSERT INTO " + table + " VALUES (" + LATENCY_ROW + ", 0)");
                    }
                }
                open++;
            } finally {
                tableLock.unlock();
            }
            return new OneConnection(c) {
                @Override
                public void acquire() throws SQLException {
                    commit(LATENCY_ROW);
                }

                @Override
                public void release() throws SQLException {
                    commit(LATENCY_ROW);
                }

                @Override
                public boolean tryRound(int key) throws SQLException {
                    return claims.round(key, () -> {
                        if (!commit(key)) {
                            insert.setInt(1, key);
                            insert.executeUpdate();
                        }
                        if (!commit(key)) throw new IllegalStateException("floor row " + key + " of " + table + " vanished");
                    });
                }

                /** One autocommit update of row {@code id}: whether the row was there. */
                private boolean commit(int id) throws SQLException {
                    update.setInt(1, id);
                    return update.executeUpdate() == 1;
                }

                @Override
                void cleanUp() throws SQLException {
                    tableLock.lock();
                    try {
                        if (--open > 0) return;
                        try (Statement st = c.createStatement()) {
                            st.execute("DROP TABLE IF EXISTS " + table);
                        }
                    } finally {
                        tableLock.unlock();
                    }
                }
            };
        }
    }
}
