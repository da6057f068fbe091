package dev.latchkey.clickhouse;

import com.clickhouse.client.api.Client;
import com.clickhouse.client.api.ClientFaultCause;
import com.clickhouse.client.api.enums.Protocol;
import dev.latchkey.UnsupportedLockUriException;
import dev.latchkey.spi.LockUri;
import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * The settings of a {@code clickhouse://user:password@host:8123/database?table=…&stale=300s&settle=1s&timeout=5s&ssl=true}
 * URI, validated before any I/O. Identifiers are restricted to {@code [A-Za-z_][A-Za-z0-9_]*} so
 * they can be quoted into SQL safely; everything else reaches the server as a bound parameter.
 *
 * @param stale   how long a lock row may live at most: the table's {@code TTL} backstop and the
 *                threshold of the synchronous clean-up; no lease may have a longer TTL
 * @param settle  how long a candidate waits between inserting its row and reading all candidates
 * @param timeout how long one request may wait to connect, for a pooled connection, and for its
 *                reply (default 5 s, a twelfth of the default 60 s TTL); a lease's heartbeats wait
 *                at most a tenth of its TTL for their reply (see {@link ClickHouseLockManager})
 * @param via     on the application's routes, what the manager runs on ({@code Client},
 *                {@code DataSource (…)}), for messages; empty on the URI route
 */
record ClickHouseSettings(String host, int port, boolean ssl, String user, String password, String database,
                          String table, Duration stale, Duration settle, Duration timeout, String masked, String via) {
    static final Set<String> PARAMS = Set.of("table", "stale", "settle", "timeout", "ssl");
    /** At most a tenth of the default 60 s TTL, so one failed renewal leaves room for more before the lease's deadline. */
    static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(5);
    private static final Pattern IDENT = Pattern.compile("[A-Za-z_][A-Za-z0-9_]{0,63}");

    static ClickHouseSettings from(LockUri uri) {
        uri.requireOnly(PARAMS);
        if (uri.host().isBlank()) throw new UnsupportedLockUriException("clickhouse:// needs a host: " + uri);
        boolean ssl = uri.booleanParam("ssl", false);
        int port = uri.port().orElse(ssl ? 8443 : 8123);
        String path = uri.path().startsWith("/") ? uri.path().substring(1) : uri.path();
        return from(uri, uri.host(), port, ssl, uri.user().orElse("default"), uri.password().orElse(""),
                path.isEmpty() ? "default" : path, uri.toString(), "");
    }

    /**
     * Settings for the application's own client or data source ({@link ClickHouseLocks}), named by
     * {@code via} (e.g. {@code Client}): {@code params} carries the URI's own parameters and the
     * database as its path, validated as in a URI; where to connect and as whom is the application's.
     */
    static ClickHouseSettings forApplication(LockUri params, String via) {
        params.requireOnly(Set.of("table", "stale", "settle", "timeout"));
        String path = params.path().startsWith("/") ? params.path().substring(1) : params.path();
        String database = path.isEmpty() ? "default" : path;
        return from(params, "", 0, false, "", "", database,
                "clickhouse via the application's " + via + ", database " + database + " " + params.params(), via);
    }

    private static ClickHouseSettings from(LockUri uri, String host, int port, boolean ssl, String user, String password,
                                           String database, String masked, String via) {
        String table = uri.param("table", "latchkey_locks");
        for (String ident : new String[] {database, table}) {
            if (!IDENT.matcher(ident).matches()) {
                throw new UnsupportedLockUriException("database and table names must match " + IDENT.pattern()
                        + ", got '" + ident + "' in " + uri);
            }
        }
        Duration stale = uri.durationParam("stale", Duration.ofSeconds(300));
        Duration settle = uri.durationParam("settle", Duration.ofSeconds(1));
        Duration timeout = uri.durationParam("timeout", DEFAULT_TIMEOUT);
        if (stale.compareTo(Duration.ofSeconds(1)) < 0 || stale.toMillis() % 1000 != 0) {
            throw new UnsupportedLockUriException("stale must be a whole number of seconds, at least 1s, in " + uri);
        }
        if (settle.isNegative() || settle.isZero()) {
            throw new UnsupportedLockUriException("settle must be positive in " + uri);
        }
        if (timeout.compareTo(Duration.ofMillis(100)) < 0) {
            throw new UnsupportedLockUriException("timeout must be at least 100ms in " + uri);
        }
        return new ClickHouseSettings(host, port, ssl, user, password, database, table, stale, settle, timeout, masked, via);
    }

    /**
     * A client for these settings, as the backend uses it (and the bench floor, so that both pay the
     * same connection, timeout and session settings): HTTP(S) to {@code host:port}, synchronous
     * inserts, and no client-side retries — a retry would hide an outage for another timeout, and a
     * blind retry of an INSERT could land after the settle window; the protocol retries instead.
     */
    Client newClient() {
        long timeoutMs = timeout.toMillis();
        return new Client.Builder()
                .addEndpoint(Protocol.HTTP, host, port, ssl)
                .setUsername(user)
                .setPassword(password)
                .setDefaultDatabase("default") // the lock database may not exist yet: names are always qualified
                .setConnectTimeout(timeoutMs, ChronoUnit.MILLIS)
                .setSocketTimeout(timeoutMs, ChronoUnit.MILLIS)
                .setConnectionRequestTimeout(timeoutMs, ChronoUnit.MILLIS)
                .setMaxRetries(0)
                .retryOnFailures(ClientFaultCause.None) // also when the client is given several endpoints
                .serverSetting("async_insert", "0") // a buffered insert would be visible late: keep inserts synchronous
                .compressServerResponse(false) // replies of a few hundred bytes: LZ4 framing only costs CPU
                .build();
    }

    /** The masked URI: a record's generated {@code toString()} would print the password. */
    @Override
    public String toString() {
        return masked;
    }

    /** {@code `database`.`table`}, safe to splice into SQL (identifiers were validated). */
    String qualifiedTable() {
        return "`" + database + "`.`" + table + "`";
    }

    /** Where the locks live, for messages: no credentials. */
    String endpoint() {
        if (host.isEmpty()) return "the application's " + via + ", database " + database + " (table " + table + ")";
        return (ssl ? "https" : "http") + "://" + host + ":" + port + "/" + database + " (table " + table + ")";
    }
}
