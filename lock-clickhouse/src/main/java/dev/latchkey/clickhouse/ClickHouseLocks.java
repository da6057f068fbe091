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

/**
 * Lock managers on the application's own ClickHouse {@link Client} (its endpoints, credentials,
 * TLS, proxy and metrics), beside the {@code clickhouse://} URI route:
 * {@code ClickHouseLocks.open(client, ClickHouseLocks.options().database("ops"))}. The options are
 * the URI's own parameters, typed, validated by the same settings record; the manager is the class
 * the URI opens, with the same guarantees ({@code docs/backends/clickhouse.md}).
 *
 * <p>Whatever the client was configured with, each of the manager's requests sets what the protocol
 * rests on: no client-side retry, {@code async_insert=0}, and waits for a pooled connection and for
 * the reply of at most {@code timeout} (a lease's heartbeats, of a tenth of its TTL). Its connect timeout
 * stays the client's: keep it within {@code timeout}. Table names are always qualified, so the
 * client's default database does not matter.
 *
 * <p><b>Ownership.</b> {@link LockManager#close()} never closes the application's client: the
 * application closes it, after the managers on it.
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
        return new ClickHouseLockManager(ClickHouseSettings.forClient(options.asUri()),
                Objects.requireNonNull(client, "client"), false, context);
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
