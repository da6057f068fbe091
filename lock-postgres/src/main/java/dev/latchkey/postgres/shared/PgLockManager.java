package dev.latchkey.postgres.shared;

import dev.latchkey.LockKeys;
import dev.latchkey.LockManager;
import dev.latchkey.spi.LeaseRuntime;
import dev.latchkey.spi.LockContext;
import java.sql.Array;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Function;

/**
 * What both PostgreSQL modes share: settings, the connection pool, creating the schema and checking
 * its registry once ({@link PgSchema}), and the manager's open/closed state. Closing a manager stops
 * new acquisitions and drops idle connections; leases already held keep working until released or
 * lost.
 */
public abstract class PgLockManager<S extends PgSession> implements LockManager {
    public final PgSettings settings;
    public final LockContext context;
    public final PgPool<S> pool;
    public final LeaseRuntime runtime;
    private volatile boolean schemaReady;
    private volatile boolean closed;
    /** The longest TTL the schema's registry is known to record (advisory mode raises it before using a longer one). */
    protected volatile long registeredTtlMillis;

    protected PgLockManager(PgSettings settings, LockContext context, Function<java.sql.Connection, S> sessions) {
        this.settings = settings;
        this.context = context;
        this.pool = new PgPool<>(settings, settings.pool, sessions);
        this.runtime = LeaseRuntime.create(context, "postgres");
    }

    /** Validates the key (before any I/O), the manager state, and prepares the schema on first use. */
    protected final String prepare(String key) {
        LockKeys.validate(key);
        prepare();
        return key;
    }

    /** Checks the manager is open; on first use creates what is missing and checks the schema's registry. */
    protected final void prepare() {
        if (closed) throw new IllegalStateException("lock manager for " + settings + " is closed");
        if (!schemaReady) {
            registeredTtlMillis = pool.call("preparing the lock table " + settings.table, c -> {
                PgSchema.ensure(c, settings);
                return PgSchema.claim(c, settings);
            });
            schemaReady = true;
        }
    }

    protected static Array metadataArray(Connection c, Map<String, String> metadata) throws SQLException {
        String[] flat = new String[metadata.size() * 2];
        int i = 0;
        for (Map.Entry<String, String> e : metadata.entrySet()) {
            flat[i++] = e.getKey();
            flat[i++] = e.getValue();
        }
        return c.createArrayOf("text", flat);
    }

    public static Map<String, String> metadataMap(Array array) throws SQLException {
        Map<String, String> m = new LinkedHashMap<>();
        if (array == null) return m;
        Object[] flat = (Object[]) array.getArray();
        for (int i = 0; i + 1 < flat.length; i += 2) m.put((String) flat[i], (String) flat[i + 1]);
        return m;
    }

    public static Instant instant(Timestamp t) {
        return t == null ? null : t.toInstant();
    }

    @Override
    public String description() {
        return settings.toString();
    }

    @Override
    public void close() {
        closed = true;
        pool.close();
    }
}
