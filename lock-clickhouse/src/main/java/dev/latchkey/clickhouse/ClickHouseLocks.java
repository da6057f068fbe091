package dev.latchkey.clickhouse;

import com.clickhouse.client.api.Client;
import dev.latchkey.LockManager;
import dev.latchkey.spi.LockContext;
import dev.latchkey.spi.LockUri;
import dev.latchkey.spi.UriOptions;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Objects;
import javax.sql.DataSource;

/**
 * Lock managers on the application's own ClickHouse {@link Client} or JDBC {@link DataSource} (its
 * endpoints, credentials, TLS, proxy, pool and metrics), beside the {@code clickhouse://} URI route:
 * {@code ClickHouseLocks.open(client, ClickHouseLocks.options().database("ops"))}, or
 * {@code ClickHouseLocks.open(dataSource, …)}. The options are the URI's own parameters, typed,
 * validated by the same settings record; the manager is the class the URI opens, with the same
 * guarantees ({@code docs/backends/clickhouse.md}) on every route.
 *
 * <p>Whatever the client or data source was configured with, each of the manager's requests sets
 * what the protocol rests on: no client-side retry, {@code async_insert=0}, and a wait for the reply
 * of at most {@code timeout} (a lease's heartbeats, of a tenth of its TTL); with a {@code Client},
 * the same bound for a pooled connection. The connect timeout stays the client's (the data
 * source's), and with a data source so does the wait for one of its connections: keep both within
 * {@code timeout}. Table names are always qualified, so the default database does not matter.
 *
 * <p><b>The JDBC route</b> needs ClickHouse's JDBC driver, {@code com.clickhouse:clickhouse-jdbc}
 * 0.10 (an optional dependency of this module: add it beside it), under the data source, pooled or
 * not: each statement is unwrapped to the driver's own to carry those settings, and a data source
 * of another driver is refused (a non-retriable {@link dev.latchkey.LockBackendException} when the
 * manager opens). Each call borrows one connection and gives it back at once; leases hold none
 * between heartbeats, so the pool needs one connection per concurrent call, not per lease.
 *
 * <p><b>Ownership.</b> {@link LockManager#close()} never closes the application's client or data
 * source: the application closes it, after the managers on it.
 */
public final class ClickHouseLocks {
    private ClickHouseLocks() {}

    /** No option set: the URI's defaults (database {@code default}, table {@code latchkey_locks}). */
    public static Options options() {
        return new Options();
    }

    /** A manager on {@code client} with the default context. */
    public static LockManager open(Client client, Options options) {
        return open(client, options, LockContext.defaults());
    }

    /**
     * A manager on {@code client}; creates the database and table if absent, as the URI route does.
     *
     * @throws dev.latchkey.LockBackendException if the table cannot be created or read
     */
    public static LockManager open(Client client, Options options, LockContext context) {
        Objects.requireNonNull(client, "client");
        ClickHouseSettings settings = ClickHouseSettings.forApplication(options.asUri(), "Client");
        return new ClickHouseLockManager(settings, new ClientStatements(settings, client, false), context);
    }

    /** A manager on {@code dataSource}, of ClickHouse's JDBC driver, with the default context. */
    public static LockManager open(DataSource dataSource, Options options) {
        return open(dataSource, options, LockContext.defaults());
    }

    /**
     * A manager on {@code dataSource}, of ClickHouse's JDBC driver (see the class comment); creates
     * the database and table if absent, as the URI route does.
     *
     * @throws IllegalStateException if ClickHouse's JDBC driver is not on the class path
     * @throws dev.latchkey.LockBackendException if the table cannot be created or read, or the data
     *         source is not of ClickHouse's JDBC driver (non-retriable)
     */
    public static LockManager open(DataSource dataSource, Options options, LockContext context) {
        Objects.requireNonNull(dataSource, "dataSource");
        try {
            Class.forName("com.clickhouse.jdbc.StatementImpl", false, ClickHouseLocks.class.getClassLoader());
        } catch (ClassNotFoundException e) {
            throw new IllegalStateException("ClickHouseLocks.open(DataSource, …) needs ClickHouse's JDBC driver on the class path:"
                    + " add com.clickhouse:clickhouse-jdbc 0.10.0 (lock-clickhouse declares it optional)", e);
        }
        ClickHouseSettings settings = ClickHouseSettings.forApplication(options.asUri(),
                "DataSource (" + dataSource.getClass().getSimpleName() + ")");
        return new ClickHouseLockManager(settings, new JdbcStatements(settings, dataSource), context);
    }

    /** The URI's own parameters, typed; each is validated when the manager opens, as in a URI. */
    public static final class Options extends UriOptions<Options> {
        private String database = "";

        private Options() {}

        /** The database of the lock table (the URI's path; default {@code default}). */
        public Options database(String database) {
            this.database = Objects.requireNonNull(database, "database");
            return this;
        }

        /** {@code table} (default {@code latchkey_locks}). */
        public Options table(String table) {
            return set("table", table);
        }

        /** {@code stale}: longest life of a lock row, whole seconds (default 300 s); no TTL may exceed it. */
        public Options stale(Duration stale) {
            return set("stale", stale);
        }

        /** {@code settle}: how long a candidate waits between its insert and reading all candidates (default 1 s). */
        public Options settle(Duration settle) {
            return set("settle", settle);
        }

        /** {@code timeout}: longest wait of one request for a connection and for its reply (default 5 s). */
        public Options timeout(Duration timeout) {
            return set("timeout", timeout);
        }

        LockUri asUri() {
            return toUri("clickhouse:///" + URLEncoder.encode(database, StandardCharsets.UTF_8));
        }
    }
}
