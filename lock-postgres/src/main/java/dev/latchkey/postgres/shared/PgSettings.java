package dev.latchkey.postgres.shared;

import dev.latchkey.UnsupportedLockUriException;
import dev.latchkey.spi.LockUri;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Properties;
import java.util.Set;
import java.util.regex.Pattern;
import javax.sql.DataSource;
import org.postgresql.PGProperty;

/**
 * A validated {@code postgres://} URI, or an application's {@link DataSource} with the same
 * parameters ({@code PostgresLocks}): where connections come from, and how to lock. Anything
 * misspelt is refused before a connection is made; {@link #toString()} is the masked URI (or names
 * the data source), so the password never reaches a message.
 */
public final class PgSettings {
    /** How keys are locked. */
    public enum Mode { ADVISORY, LEASE }

    /** Our own parameters; everything else must be a PgJDBC connection property. */
    private static final Set<String> OWN = Set.of("mode", "schema", "table", "pool", "poll", "timeout", "fencing");
    private static final Pattern IDENTIFIER = Pattern.compile("[A-Za-z_][A-Za-z0-9_]{0,49}");

    public final Mode mode;
    /** The application's data source, or null: connect with {@link #jdbcUrl} and {@link #properties}. */
    final DataSource dataSource;
    final String jdbcUrl;
    public final Properties properties;
    /** {@code host:port/db}: names the endpoint in errors; no credential. */
    public final String endpoint;
    /** Quoted, schema-qualified names of our objects. */
    final String schema;
    public final String table;
    /** Unquoted names, for catalog look-ups and the notification channel. */
    public final String schemaName;
    final String tableName;
    /** Most connections a manager opens for short statements (lease mode; advisory waits and pins). */
    final int pool;
    /** Polling interval of waiters when no notification arrives. */
    public final Duration poll;
    /**
     * Advisory mode: draw a durable fencing token with each acquisition (costs one commit that
     * waits for the disk); {@code fencing=false} skips it for the latency of a bare advisory lock.
     */
    public final boolean fencing;
    /**
     * Network timeout of one statement that is not a lock wait and not on a session that holds a
     * lease: acquisitions (a lock wait adds its wait), releases, inspection, force releases, lease-mode
     * statements. An advisory lease's own statements (renewals, its row write) wait for their reply
     * until the lease's session is due to end instead ({@code AdvisoryLease}): the driver closes a
     * connection whose reply is later, and that would free the lock while the lease may be valid.
     */
    public final Duration timeout;
    /** The schema's registry: which mode and table its locks use (see {@link PgSchema}). */
    public final String registry;
    private final String masked;

    /**
     * @param dataSource null for a URI; else the application's, and {@code uri} carries only our own
     *                   parameters (its connection part is unused)
     */
    private PgSettings(LockUri uri, Map<String, String> env, DataSource dataSource) {
        this.dataSource = dataSource;
        masked = dataSource == null ? uri.toString() : "postgres via the application's " + dataSource.getClass().getName()
                + (uri.params().isEmpty() ? "" : " " + uri.params());
        for (String name : uri.params().keySet()) {
            if (dataSource != null && !OWN.contains(name)) {
                // connection properties belong to the data source the application configured
                throw new UnsupportedLockUriException("unknown parameter '" + name + "' for " + masked + "; accepted: " + OWN);
            }
            if (!OWN.contains(name) && PGProperty.forName(name) == null) {
                throw new UnsupportedLockUriException("unknown parameter '" + name + "' in " + masked
                        + "; accepted: " + OWN + " and PostgreSQL JDBC properties (sslmode, sslrootcert, connectTimeout, ApplicationName, …)");
            }
        }
        String m = uri.param("mode", "advisory").toLowerCase(Locale.ROOT);
        switch (m) {
            case "advisory": mode = Mode.ADVISORY; break;
            case "lease": mode = Mode.LEASE; break;
            default: throw new UnsupportedLockUriException("mode must be 'advisory' or 'lease', was '" + m + "' in " + masked);
        }
        schemaName = identifier(uri, "schema", "public");
        tableName = identifier(uri, "table", mode == Mode.ADVISORY ? "latchkey_advisory" : "latchkey_leases");
        schema = quote(schemaName);
        table = schema + "." + quote(tableName);
        registry = schema + "." + quote(PgSchema.REGISTRY_TABLE);
        fencing = uri.booleanParam("fencing", true);
        if (!fencing && mode == Mode.LEASE) {
            throw new UnsupportedLockUriException("fencing=false applies to mode=advisory only (a lease row's token is free) in " + masked);
        }
        pool = uri.intParam("pool", 8);
        if (pool < 1 || pool > 1000) throw new UnsupportedLockUriException("pool must be 1..1000 in " + masked);
        poll = uri.durationParam("poll", Duration.ofSeconds(1));
        timeout = uri.durationParam("timeout", Duration.ofSeconds(5));
        if (poll.toMillis() < 10 || timeout.toMillis() < 100) {
            throw new UnsupportedLockUriException("poll must be at least 10ms and timeout at least 100ms in " + masked);
        }

        properties = new Properties();
        if (dataSource != null) {
            // the connections are the application's; ours while we hold them, named as ours are
            endpoint = "the application's DataSource (" + dataSource.getClass().getSimpleName() + ")";
            jdbcUrl = null;
            properties.setProperty("ApplicationName", "latchkey");
            return;
        }
        String host = uri.host().isEmpty() ? "localhost" : uri.host();
        int port = uri.port().orElse(5432);
        String user = uri.user().orElse(env.getOrDefault("PGUSER", System.getProperty("user.name")));
        String db = uri.path().startsWith("/") ? uri.path().substring(1) : uri.path();
        if (db.isEmpty()) db = env.getOrDefault("PGDATABASE", user);
        if (db.contains("/")) throw new UnsupportedLockUriException("database name must not contain '/' in " + masked);
        endpoint = host + ":" + port + "/" + db;

        uri.params().forEach((k, v) -> {
            if (!OWN.contains(k)) properties.setProperty(k, v);
        });
        properties.setProperty("user", user);
        String password = uri.password().orElse(uri.param("password").orElse(env.get("PGPASSWORD")));
        if (password != null) properties.setProperty("password", password);
        properties.putIfAbsent("ApplicationName", "latchkey");
        properties.putIfAbsent("connectTimeout", String.valueOf(Math.max(1, timeout.toSeconds())));
        // connectTimeout bounds the TCP connect only: a server that accepts but stops answering would
        // hang the login of a new connection (a renewal's) forever; PgPool.connect then sets the same
        // network timeout on the open connection
        properties.putIfAbsent("socketTimeout", String.valueOf(Math.max(1, timeout.toSeconds())));
        // a half-open pinned session must eventually end on the server too, freeing its locks
        properties.putIfAbsent("tcpKeepAlive", "true");
        String hostPart = host.contains(":") && !host.startsWith("[") ? "[" + host + "]" : host;
        jdbcUrl = "jdbc:postgresql://" + hostPart + ":" + port + "/" + urlEncode(db);
    }

    public static PgSettings parse(LockUri uri) {
        return new PgSettings(uri, System.getenv(), null);
    }

    static PgSettings parse(LockUri uri, Map<String, String> env) {
        return new PgSettings(uri, env, null);
    }

    /** Settings for connections from {@code dataSource}; {@code params} are our own URI parameters, validated as in a URI. */
    public static PgSettings forDataSource(DataSource dataSource, LockUri params) {
        return new PgSettings(params, Map.of(), Objects.requireNonNull(dataSource, "dataSource"));
    }

    /** A new connection: from the application's data source, or the driver's. */
    Connection newConnection() throws SQLException {
        return dataSource != null ? dataSource.getConnection() : DriverManager.getConnection(jdbcUrl, properties);
    }

    /** The notification channel of this table (short and fixed: channel names are identifiers). */
    public String channel() {
        return "latchkey_" + Integer.toHexString((schemaName + "." + tableName).hashCode());
    }

    private String identifier(LockUri uri, String name, String def) {
        String v = uri.param(name, def);
        if (!IDENTIFIER.matcher(v).matches()) {
            throw new UnsupportedLockUriException(name + " must be a plain SQL identifier ([A-Za-z_][A-Za-z0-9_]*, at most 50), was '"
                    + v + "' in " + masked);
        }
        return v;
    }

    public static String quote(String identifier) {
        return '"' + identifier + '"';
    }

    private static String urlEncode(String s) {
        return java.net.URLEncoder.encode(s, java.nio.charset.StandardCharsets.UTF_8).replace("+", "%20");
    }

    @Override
    public String toString() {
        return masked;
    }
}
