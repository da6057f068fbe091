package dev.latchkey.postgres;

import dev.latchkey.LockManager;
import dev.latchkey.postgres.shared.PgSettings;
import dev.latchkey.spi.LockContext;
import dev.latchkey.spi.LockUri;
import dev.latchkey.spi.UriOptions;
import java.time.Duration;
import javax.sql.DataSource;

/**
 * Lock managers on the application's own {@link DataSource} (its credentials, TLS, pool and
 * metrics), beside the {@code postgres://} URI route: {@code PostgresLocks.open(dataSource,
 * PostgresLocks.options().mode(Mode.LEASE))}. The options are the URI's own parameters, typed, and
 * are validated by the same settings record; the manager is the same class the URI opens, with the
 * same guarantees ({@code docs/backends/postgres.md}).
 *
 * <p><b>Ownership.</b> The manager never closes the data source: {@link LockManager#close()} ends
 * only the connections it took from it. A connection it takes is its own until it lets it go, and
 * letting it go ends the server session (the driver's physical connection is closed, so the pool
 * drops it and opens another): a session that held a lease, with the lease's timeouts, never
 * returns to the application's pool. The manager keeps up to {@link Options#pool(int) pool} idle
 * connections (default 8) checked out between calls.
 *
 * <p><b>What the pool must give</b> ({@code mode=advisory}, the default): one connection for each
 * lease held, for the lease's whole life (the lock is the session's), plus one for short
 * statements — a timed-out {@code acquire} reads who holds the key on it — so size the pool at
 * least concurrent leases + 1 beyond what the application itself uses. Its connections must be
 * PostgreSQL sessions of their own: no PgBouncer {@code pool_mode=transaction} or {@code statement}
 * in between (refused when detected, as on the URI route). When the pool is exhausted, an
 * acquisition waits as long as the pool lets {@code getConnection()} wait (HikariCP's
 * {@code connectionTimeout}) and then fails with a retriable {@link dev.latchkey.LockBackendException};
 * leases already held are unaffected (they renew on their own session). {@code mode=lease} holds one
 * connection for its release listener and borrows others only for single statements, so
 * concurrent operations + 1 suffices, and transaction pooling is fine there. While a session is ours,
 * its {@code application_name} is {@code latchkey} (a holder's, while it holds a lease).
 */
public final class PostgresLocks {
    /** How keys are locked: the URI's {@code mode}. */
    public enum Mode { ADVISORY, LEASE }

    private PostgresLocks() {}

    /** No option set: the URI's defaults. */
    public static Options options() {
        return new Options();
    }

    /** A manager on {@code dataSource} with the default options and context. */
    public static LockManager open(DataSource dataSource) {
        return open(dataSource, options(), LockContext.defaults());
    }

    /** A manager on {@code dataSource}; see the class comment for what it takes from the pool. */
    public static LockManager open(DataSource dataSource, Options options) {
        return open(dataSource, options, LockContext.defaults());
    }

    /** A manager on {@code dataSource}, with a context (clock) as {@code Latchkey.open(uri, context)} takes. */
    public static LockManager open(DataSource dataSource, Options options, LockContext context) {
        return PostgresLockProvider.open(PgSettings.forDataSource(dataSource, options.asUri()), context);
    }

    /** The URI's own parameters, typed; each is validated when the manager opens, as in a URI. */
    public static final class Options extends UriOptions<Options> {
        private Options() {}

        /** {@code mode}: advisory (default) or lease. */
        public Options mode(Mode mode) {
            return set("mode", mode);
        }

        /** {@code schema}: where the lock table lives (default {@code public}). */
        public Options schema(String schema) {
            return set("schema", schema);
        }

        /** {@code table}: the lock table's name. */
        public Options table(String table) {
            return set("table", table);
        }

        /** {@code pool}: most idle connections the manager keeps between calls (default 8). */
        public Options pool(int pool) {
            return set("pool", pool);
        }

        /** {@code poll}: how often waiters look again when no notification arrives (default 1 s). */
        public Options poll(Duration poll) {
            return set("poll", poll);
        }

        /**
         * {@code timeout}: network timeout of one statement that is not a lock wait (default 5 s); an
         * advisory lease's renewals wait for their reply until the lease's session is due to end.
         */
        public Options timeout(Duration timeout) {
            return set("timeout", timeout);
        }

        /** {@code fencing}: advisory mode only; false skips the durable token for a bare advisory lock's latency. */
        public Options fencing(boolean fencing) {
            return set("fencing", fencing);
        }

        /** The options as URI parameters, for the settings record's one validation. */
        LockUri asUri() {
            return toUri("postgres:///");
        }
    }
}
