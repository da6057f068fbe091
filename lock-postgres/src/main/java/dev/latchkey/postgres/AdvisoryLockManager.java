package dev.latchkey.postgres;

import dev.latchkey.Capability;
import dev.latchkey.Lease;
import dev.latchkey.LeaseOptions;
import dev.latchkey.LockBackendException;
import dev.latchkey.LockInfo;
import dev.latchkey.LockTimeoutException;
import dev.latchkey.spi.LockContext;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.function.ToLongFunction;

/**
 * {@code mode=advisory}: a session-level advisory lock, held on a connection pinned for the
 * lease's life.
 *
 * <p><b>Guarantee.</b> PostgreSQL grants an advisory lock id to one session at a time, so at most
 * one lease per key is valid. The lock ends with its session: if the holder's process or
 * connection dies, or an administrator terminates the session, the server frees it at once; if
 * the holder stops renewing, its own manager closes the session when the TTL runs out
 * ({@link ManagedLease} deadline). Keys map to ids by the first 8 bytes of SHA-256; each id's key
 * is recorded in the table, so two keys that share an id are refused with an error, never
 * silently locked together. The fencing token comes from a sequence in the same statement (and
 * commit) that takes the lock, so it is durable before the caller sees it.
 *
 * <p>Not safe behind a transaction-pooling proxy (PgBouncer {@code pool_mode=transaction}): a
 * session lock there belongs to whichever client shares the server session. Use {@code mode=lease}.
 */
final class AdvisoryLockManager extends PgLockManager {
    private static final Set<Capability> WITH_TOKENS = Set.copyOf(EnumSet.of(
            Capability.FENCING_TOKENS, Capability.LIST, Capability.NATIVE_WAIT, Capability.HOLDER_DEATH_DETECTION));
    private static final Set<Capability> WITHOUT_TOKENS = Set.copyOf(EnumSet.of(
            Capability.LIST, Capability.NATIVE_WAIT, Capability.HOLDER_DEATH_DETECTION));

    private final ToLongFunction<String> hash;
    private final String acquireTry;
    private final String acquireWait;
    private final String holderQuery;

    AdvisoryLockManager(PgSettings settings, LockContext context) {
        this(settings, context, AdvisoryLockManager::lockId);
    }

    /** Test hook: {@code hash} replaces the key → lock id function (to force collisions). */
    AdvisoryLockManager(PgSettings settings, LockContext context, ToLongFunction<String> hash) {
        super(settings, context);
        this.hash = hash;
        String t = settings.table;
        String token = settings.fencing ? "nextval('" + PgSchema.sequence(settings) + "')" : "NULL::bigint";
        // One round trip: take the lock; only if won, record holder and draw the token (same commit).
        // ON CONFLICT ... WHERE a.key = excluded.key leaves a row of another key untouched: a collision.
        String tail = ","
                + " u AS (INSERT INTO " + t + " AS a (id, key, owner, lease_id, token, pid, acquired_at, ttl_ms, metadata)"
                + "  SELECT ?, ?, ?, ?, " + token + ", pg_backend_pid(), clock_timestamp(), ?, ?"
                + "  FROM l WHERE l.got"
                + "  ON CONFLICT (id) DO UPDATE SET owner = excluded.owner, lease_id = excluded.lease_id,"
                + "   token = excluded.token, pid = excluded.pid, acquired_at = excluded.acquired_at,"
                + "   ttl_ms = excluded.ttl_ms, metadata = excluded.metadata"
                + "  WHERE a.key = excluded.key"
                + "  RETURNING a.token, true AS key_won)"
                + " SELECT l.got, u.key_won IS NOT NULL, u.token, (SELECT r.key FROM " + t + " r WHERE r.id = ?)"
                + " FROM l LEFT JOIN u ON true";
        // without tokens the holder row is only informational: its commit need not wait for the disk
        String lazyCommit = settings.fencing ? "" : ", set_config('synchronous_commit', 'off', true) AS lazy";
        acquireTry = "WITH l AS (SELECT pg_try_advisory_lock(?) AS got" + lazyCommit + ")" + tail;
        acquireWait = "WITH l AS (SELECT true AS got" + lazyCommit + " FROM pg_advisory_lock(?))" + tail;
        holderQuery = "SELECT l.pid, a.key, a.owner, a.lease_id, a.token, a.acquired_at, a.ttl_ms, a.metadata,"
                + " a.pid AS row_pid, s.application_name"
                + " FROM pg_locks l"
                + " LEFT JOIN " + t + " a ON a.id = ((l.classid::int8 << 32) | l.objid::int8)"
                + " LEFT JOIN pg_stat_activity s ON s.pid = l.pid"
                + " WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1"
                + " AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())";
    }

    /** The stable key → advisory lock id mapping: the first 8 bytes of SHA-256 of the UTF-8 key. */
    static long lockId(String key) {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(key.getBytes(StandardCharsets.UTF_8));
            return ByteBuffer.wrap(digest, 0, 8).getLong();
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is missing from this JVM", e);
        }
    }

    @Override
    public Optional<Lease> tryAcquire(String key, LeaseOptions options) {
        return Optional.ofNullable(attempt(prepare(key), options, null));
    }

    @Override
    public Lease acquire(String key, Duration maxWait, LeaseOptions options) {
        prepare(key);
        Lease lease = attempt(key, options, maxWait.toMillis() < 1 ? null : maxWait);
        if (lease != null) return lease;
        throw new LockTimeoutException(key, maxWait, inspect(key).orElse(null));
    }

    /**
     * One acquisition on a fresh or idle connection, which becomes the lease's pinned session;
     * {@code wait == null}: do not wait. Returns null when the lock is held (or the wait ran out).
     */
    private Lease attempt(String key, LeaseOptions options, Duration wait) {
        long id = hash.applyAsLong(key);
        String leaseId = UUID.randomUUID().toString();
        Connection c = pool.borrow();
        boolean pinned = false;
        try {
            if (wait != null) {
                try (PreparedStatement ps = c.prepareStatement("SELECT set_config('lock_timeout', ?, false)")) {
                    ps.setString(1, Long.toString(Math.min(Integer.MAX_VALUE, wait.toMillis())));
                    ps.execute();
                }
                PgPool.networkTimeout(c, wait.toMillis() + settings.timeout.toMillis());
            }
            String recorded;
            long token;
            boolean got;
            try (PreparedStatement ps = c.prepareStatement(wait == null ? acquireTry : acquireWait)) {
                ps.setLong(1, id);
                ps.setLong(2, id);
                ps.setString(3, key);
                ps.setString(4, options.owner());
                ps.setString(5, leaseId);
                ps.setLong(6, options.ttl().toMillis());
                ps.setArray(7, metadataArray(c, options.metadata()));
                ps.setLong(8, id);
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    got = rs.getBoolean(1);
                    boolean won = rs.getBoolean(2);
                    token = rs.getLong(3);
                    recorded = rs.getString(4);
                    if (got && !won) {
                        unlock(c, id);
                        throw collision(key, id, recorded);
                    }
                }
            } catch (SQLException e) {
                if ("55P03".equals(e.getSQLState()) && wait != null) {
                    // closed, not reused: had the timeout hit the row write, the session would hold the lock
                    pool.discard(c);
                    c = null;
                    return null;
                }
                throw e;
            }
            if (wait != null) PgPool.networkTimeout(c, settings.timeout.toMillis());
            if (!got) {
                if (recorded != null && !recorded.equals(key)) throw collision(key, id, recorded);
                return null;
            }
            AdvisoryLease lease = new AdvisoryLease(this, c, id, key, leaseId, token, options,
                    context.time().nanoTime());
            pinned = true;
            return lease;
        } catch (SQLException e) {
            // closing ends the session, and with it any lock this statement took; a lost connection
            // (server restarted?) also drops the idle ones, so the next call connects afresh
            if (PgErrors.connectionLost(e) || PgPool.isClosed(c)) {
                pool.giveBack(c, true);
            } else {
                pool.discard(c);
            }
            c = null;
            throw PgErrors.translate(settings, "acquiring '" + key + "'", e);
        } finally {
            if (c != null && !pinned) pool.giveBack(c, false);
        }
    }

    private static void unlock(Connection c, long id) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT pg_advisory_unlock(?)")) {
            ps.setLong(1, id);
            ps.execute();
        }
    }

    private LockBackendException collision(String key, long id, String recorded) {
        return new LockBackendException("PostgreSQL at " + settings.endpoint + ": key '" + key
                + "' maps to advisory lock id " + id + ", which " + settings.table + " already records for key '"
                + recorded + "' (a hash collision); refusing to share one lock between two keys — rename one of them",
                false);
    }

    @Override
    public Optional<LockInfo> inspect(String key) {
        prepare(key);
        long id = hash.applyAsLong(key);
        List<LockInfo> found = holders(" AND ((l.classid::int8 << 32) | l.objid::int8) = ?", ps -> ps.setLong(1, id),
                "inspecting '" + key + "'", key);
        return found.stream().findFirst();
    }

    @Override
    public List<LockInfo> list(String prefix) {
        prepare();
        return holders(" AND starts_with(a.key, ?) ORDER BY a.key", ps -> ps.setString(1, prefix),
                "listing locks", null);
    }

    /** Held advisory locks of this database matching {@code condition}, described from the table. */
    private List<LockInfo> holders(String condition, Binder binder, String action, String forKey) {
        return pool.call(action, c -> {
            List<LockInfo> out = new ArrayList<>();
            try (PreparedStatement ps = c.prepareStatement(holderQuery + condition)) {
                binder.bind(ps);
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        String key = rs.getString("key");
                        int pid = rs.getInt("pid");
                        String app = rs.getString("application_name");
                        if (key == null || rs.getInt("row_pid") != pid) {
                            // locked by a session that has not (yet) recorded itself, or by foreign code
                            if (forKey == null) continue;
                            out.add(new LockInfo(forKey, "session pid " + pid + (app == null ? "" : " (" + app + ")"),
                                    null, 0, null, null, null));
                            continue;
                        }
                        if (forKey != null && !forKey.equals(key)) {
                            out.add(new LockInfo(forKey, "holder of colliding key '" + key + "' (session pid " + pid + ")",
                                    null, 0, null, null, null));
                            continue;
                        }
                        Instant acquired = instant(rs.getTimestamp("acquired_at"));
                        long ttl = rs.getLong("ttl_ms");
                        out.add(new LockInfo(key, rs.getString("owner"), rs.getString("lease_id"), rs.getLong("token"),
                                acquired, acquired == null ? null : acquired.plusMillis(ttl),
                                metadataMap(rs.getArray("metadata"))));
                    }
                }
            }
            return out;
        });
    }

    @Override
    public boolean forceRelease(String key) {
        prepare(key);
        long id = hash.applyAsLong(key);
        return pool.call("force-releasing '" + key + "'", c -> {
            // the two-argument form waits (up to 5 s) until the session is gone and its locks are free
            try (PreparedStatement ps = c.prepareStatement("SELECT l.pid, pg_terminate_backend(l.pid, 5000)"
                    + " FROM pg_locks l WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1"
                    + " AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())"
                    + " AND ((l.classid::int8 << 32) | l.objid::int8) = ?")) {
                ps.setLong(1, id);
                boolean broken = false;
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) broken |= rs.getBoolean(2);
                }
                return broken;
            } catch (SQLException e) {
                if ("42501".equals(e.getSQLState())) {
                    throw new LockBackendException("PostgreSQL at " + settings.endpoint + ": not permitted to terminate the session"
                            + " holding '" + key + "' (" + e.getMessage() + "); forceRelease needs the holder's role, membership"
                            + " in it, or pg_signal_backend (a superuser's session only by a superuser)", false, e);
                }
                throw e;
            }
        });
    }

    @Override
    public Set<Capability> capabilities() {
        return settings.fencing ? WITH_TOKENS : WITHOUT_TOKENS;
    }

    /** Binds the parameters of a query condition. */
    @FunctionalInterface
    private interface Binder {
        void bind(PreparedStatement ps) throws SQLException;
    }
}
