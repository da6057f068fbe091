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
import java.util.Map;
import java.util.Queue;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
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
 * is recorded in the table once and for good (its row is never deleted), so two keys that share an
 * id are refused with an error, never silently locked together. The fencing token comes from a
 * sequence in the same statement (and commit) that takes the lock, so it is durable before the
 * caller sees it — or, for a caller that waits, is drawn (durably) before the wait and used only if
 * it still exceeds the token the row records for the key, so that a hand-off need not wait for the
 * disk.
 *
 * <p><b>Who holds what.</b> A holding session names its lease in its {@code application_name}
 * ({@link #marker}), set in the statement that takes the lock and reset by the one that releases
 * it; the row describes the holder (owner, metadata, lease id) when its lease id matches. With
 * {@code fencing=false} the row is written off the acquire path once this manager has recorded
 * the key: acquire and release are then one statement each, without a write, like a bare advisory
 * lock; a lease still held {@link #RECORD_DELAY} later has its row written in the background, and
 * {@link #inspect} waits for that (a lease released sooner is never written).
 *
 * <p>Not safe behind a transaction-pooling proxy (PgBouncer {@code pool_mode=transaction}): a
 * session lock there belongs to whichever client shares the server session. Use {@code mode=lease}.
 */
final class AdvisoryLockManager extends PgLockManager {
    private static final Set<Capability> WITH_TOKENS = Set.copyOf(EnumSet.of(
            Capability.FENCING_TOKENS, Capability.LIST, Capability.NATIVE_WAIT, Capability.HOLDER_DEATH_DETECTION));
    private static final Set<Capability> WITHOUT_TOKENS = Set.copyOf(EnumSet.of(
            Capability.LIST, Capability.NATIVE_WAIT, Capability.HOLDER_DEATH_DETECTION));

    /** How long a {@code fencing=false} lease is held before its row is written (shorter ones never are). */
    static final Duration RECORD_DELAY = Duration.ofMillis(5);
    /** Keys this manager recorded for their ids, so that {@code fencing=false} may skip the row; bounded. */
    private static final int RECORDED_KEYS_MAX = 4096;
    /** {@code application_name} is cut at 63 bytes: room for the lease id and a prefix of the configured name. */
    private static final int MARKER_PREFIX_MAX = 20;
    private static final String MARKER = " lease ";

    private final ToLongFunction<String> hash;
    /** The configured {@code application_name}, restored when a lease ends. */
    final String idleName;
    /** {@link #marker} before the lease id: printable ASCII only, as the server keeps it. */
    private final String markerPrefix;
    private final Map<Long, String> recordedKeys = new ConcurrentHashMap<>();
    private final Queue<AdvisoryLease> unrecorded = new ConcurrentLinkedQueue<>();
    private final AtomicBoolean recordingScheduled = new AtomicBoolean();
    /** Takes the lock if free; if won, records the holder (and draws a fresh token). */
    private final String acquireTry;
    /** {@link #acquireTry}, or when the lock is busy (fencing only) draws a token ahead, for the wait. */
    private final String acquireTryOrDraw;
    /** Waits for the lock, then records the holder ({@code fencing=false}). */
    private final String acquireWait;
    /** Waits for the lock, then records the holder with the token drawn ahead, if it is still the highest. */
    private final String acquireWaitDrawn;
    /** Records the holder with a fresh token once the lock is held (when the token drawn ahead was overtaken). */
    private final String record;
    /** {@code fencing=false}, key recorded: takes the lock if free, writes nothing. */
    private final String takeTry;
    /** {@code fencing=false}, key recorded: waits for the lock, writes nothing. */
    private final String takeWait;
    /** Writes the row of a lease taken by {@link #takeTry}/{@link #takeWait} (the token column stays). */
    private final String recordLater;
    /** Unlocks and restores the configured {@code application_name}. */
    final String release;
    private final String holderQuery;

    AdvisoryLockManager(PgSettings settings, LockContext context) {
        this(settings, context, AdvisoryLockManager::lockId);
    }

    /** Test hook: {@code hash} replaces the key → lock id function (to force collisions). */
    AdvisoryLockManager(PgSettings settings, LockContext context, ToLongFunction<String> hash) {
        super(settings, context);
        this.hash = hash;
        this.idleName = settings.properties.getProperty("ApplicationName");
        String name = idleName.length() > MARKER_PREFIX_MAX ? idleName.substring(0, MARKER_PREFIX_MAX) : idleName;
        this.markerPrefix = name.replaceAll("[^\\x20-\\x7e]", "?") + MARKER;
        String t = settings.table;
        String seq = PgSchema.sequence(settings);
        String token = settings.fencing ? "nextval('" + seq + "')" : "NULL::bigint";
        // l0 takes the lock; l names the lease in application_name, only if won
        String tryLock = "WITH l0 AS (SELECT pg_try_advisory_lock(?) AS got),";
        String waitLock = "WITH l0 AS (SELECT true AS got FROM pg_advisory_lock(?)),";
        String mark = " l AS (SELECT got, CASE WHEN got THEN set_config('application_name', ?, false) END AS app";
        // without tokens the holder row is only informational: its commit need not wait for the disk
        String lazyCommit = ", set_config('synchronous_commit', 'off', true) AS lazy";
        String l = mark + (settings.fencing ? "" : lazyCommit) + " FROM l0)";
        // One round trip: take the lock; only if won, record holder and draw the token (same commit).
        // ON CONFLICT ... WHERE a.key = excluded.key leaves a row of another key untouched: a collision,
        // and only then is the recorded key read (the CASE keeps that look-up off the common path).
        String tail = ","
                + " u AS (INSERT INTO " + t + " AS a (id, key, owner, lease_id, token, pid, acquired_at, ttl_ms, metadata)"
                + "  SELECT ?, ?, ?, ?, " + token + ", pg_backend_pid(), clock_timestamp(), ?, ?"
                + "  FROM l WHERE l.got"
                + "  ON CONFLICT (id) DO UPDATE SET owner = excluded.owner, lease_id = excluded.lease_id,"
                + "   token = excluded.token, pid = excluded.pid, acquired_at = excluded.acquired_at,"
                + "   ttl_ms = excluded.ttl_ms, metadata = excluded.metadata"
                + "  WHERE a.key = excluded.key"
                + "  RETURNING a.token, true AS key_won)"
                + " SELECT l.got, u.key_won IS NOT NULL, u.token,"
                + "  CASE WHEN u.key_won IS NULL THEN (SELECT r.key FROM " + t + " r WHERE r.id = ?) END";
        String from = " FROM l LEFT JOIN u ON true";
        acquireTry = tryLock + l + tail + from;
        // A waiter draws its token before it waits, so that the hand-off itself need not wait for the disk:
        // nextval plus an xid make this commit flush the sequence's WAL, so the token is durable (see README).
        acquireTryOrDraw = tryLock + l + tail
                + ", CASE WHEN NOT l.got THEN " + token + " END AS drawn,"
                + " CASE WHEN NOT l.got THEN pg_current_xact_id() END AS xid" + from;
        acquireWait = waitLock + l + tail + from;
        // The drawn token is valid only if greater than every earlier token of the key: the row keeps the
        // latest holder's token, so "a.token < drawn" proves it (a NULL, a missing row, another key: not
        // proven, and the caller records a fresh token instead). The token is durable already: this
        // commit need not wait for the disk.
        acquireWaitDrawn = waitLock + mark + lazyCommit + " FROM l0),"
                + " u AS (UPDATE " + t + " AS a SET owner = ?, lease_id = ?, token = ?, pid = pg_backend_pid(),"
                + "  acquired_at = clock_timestamp(), ttl_ms = ?, metadata = ?"
                + "  FROM l WHERE a.id = ? AND a.key = ? AND a.token < ? RETURNING a.token)"
                + " SELECT u.token FROM l LEFT JOIN u ON true";
        record = "WITH l0 AS (SELECT ?::bigint IS NOT NULL AS got)," + l + tail + from;
        // CASE evaluates its branch only when the lock was won: the lease's name, else NULL
        takeTry = "SELECT CASE WHEN pg_try_advisory_lock(?) THEN set_config('application_name', ?, false) END";
        takeWait = "SELECT set_config('application_name', ?, false) FROM pg_advisory_lock(?)";
        recordLater = "WITH s AS (SELECT set_config('synchronous_commit', 'off', true))"
                + " UPDATE " + t + " SET owner = ?, lease_id = ?, pid = pg_backend_pid(),"
                + " acquired_at = clock_timestamp() - ? * interval '1 microsecond', ttl_ms = ?, metadata = ?"
                + " FROM s WHERE id = ? AND key = ?";
        release = "SELECT pg_advisory_unlock(?), set_config('application_name', ?, false)";
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
        byte[] digest = SHA_256.get().digest(key.getBytes(StandardCharsets.UTF_8));
        return ByteBuffer.wrap(digest, 0, 8).getLong();
    }

    private static final ThreadLocal<MessageDigest> SHA_256 = ThreadLocal.withInitial(() -> {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is missing from this JVM", e);
        }
    });

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
        // without tokens, once this manager has recorded the key for its id, the row can wait
        boolean bare = !settings.fencing && key.equals(recordedKeys.get(id));
        Connection c = pool.borrow();
        boolean pinned = false;
        try {
            long token;
            if (bare) {
                if (!take(c, takeTry, id, leaseId)) {
                    if (wait == null) return null;
                    if (awaitLock(c, id, key, leaseId, options, wait, null, true) == null) {
                        c = null; // discarded
                        return null;
                    }
                }
                token = 0;
            } else if (wait == null || settings.fencing) {
                Written w = write(c, wait == null ? acquireTry : acquireTryOrDraw, wait != null, id, key, leaseId, options);
                if (w.got) {
                    token = w.token;
                } else {
                    if (w.recorded != null && !w.recorded.equals(key)) throw collision(key, id, w.recorded);
                    if (wait == null) return null;
                    Long t = awaitLock(c, id, key, leaseId, options, wait, w.drawn, false);
                    if (t == null) {
                        c = null;
                        return null;
                    }
                    token = t;
                }
            } else {
                Long t = awaitLock(c, id, key, leaseId, options, wait, null, false);
                if (t == null) {
                    c = null;
                    return null;
                }
                token = t;
            }
            AdvisoryLease lease = new AdvisoryLease(this, c, id, key, leaseId, token, options,
                    context.time().nanoTime());
            pinned = true;
            if (bare) {
                recordLater(lease);
            } else if (!settings.fencing) {
                if (recordedKeys.size() >= RECORDED_KEYS_MAX) recordedKeys.clear();
                recordedKeys.put(id, key);
            }
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

    /** What a statement of the {@link #acquireTry} family returned. */
    private static final class Written {
        boolean got;
        long token;
        String recorded;
        Long drawn;
    }

    /**
     * Runs a statement of the {@link #acquireTry} family. If it took the lock but the id is recorded
     * for another key, it unlocks and throws the collision.
     */
    private Written write(Connection c, String sql, boolean drawsAhead, long id, String key, String leaseId,
                          LeaseOptions options) throws SQLException {
        Written w = new Written();
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            ps.setLong(1, id);
            ps.setString(2, marker(leaseId));
            ps.setLong(3, id);
            ps.setString(4, key);
            ps.setString(5, options.owner());
            ps.setString(6, leaseId);
            ps.setLong(7, options.ttl().toMillis());
            ps.setArray(8, metadataArray(c, options.metadata()));
            ps.setLong(9, id);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                w.got = rs.getBoolean(1);
                boolean won = rs.getBoolean(2);
                w.token = rs.getLong(3);
                w.recorded = rs.getString(4);
                if (drawsAhead) {
                    long drawn = rs.getLong(5);
                    w.drawn = rs.wasNull() ? null : drawn;
                }
                if (w.got && !won) {
                    unlock(c, id);
                    throw collision(key, id, w.recorded);
                }
            }
        }
        return w;
    }

    /** Runs {@link #takeTry} or {@link #takeWait}: the lock, and the lease's name, nothing written. */
    private boolean take(Connection c, String sql, long id, String leaseId) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            boolean waits = sql == takeWait;
            ps.setLong(waits ? 2 : 1, id);
            ps.setString(waits ? 1 : 2, marker(leaseId));
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() && rs.getString(1) != null;
            }
        }
    }

    /**
     * Waits on {@code c} for the lock, under {@code lock_timeout} = {@code wait}, and records the
     * holder: with the token {@code drawn} ahead if it is still the key's highest, else with a fresh
     * one (durable, one more round trip); without a token if {@code fencing=false}; not at all if
     * {@code bare} (the caller has it recorded later). Returns the token, or null when the wait ran
     * out — {@code c} is then closed, not reused: had the timeout hit the row write, the session
     * would hold the lock.
     */
    private Long awaitLock(Connection c, long id, String key, String leaseId, LeaseOptions options, Duration wait,
                           Long drawn, boolean bare) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT set_config('lock_timeout', ?, false)")) {
            ps.setString(1, Long.toString(Math.min(Integer.MAX_VALUE, wait.toMillis())));
            ps.execute();
        }
        PgPool.networkTimeout(c, wait.toMillis() + settings.timeout.toMillis());
        Long token;
        try {
            if (bare) {
                take(c, takeWait, id, leaseId);
                token = 0L;
            } else if (drawn == null) {
                token = write(c, acquireWait, false, id, key, leaseId, options).token;
            } else {
                token = null;
                try (PreparedStatement ps = c.prepareStatement(acquireWaitDrawn)) {
                    ps.setLong(1, id);
                    ps.setString(2, marker(leaseId));
                    ps.setString(3, options.owner());
                    ps.setString(4, leaseId);
                    ps.setLong(5, drawn);
                    ps.setLong(6, options.ttl().toMillis());
                    ps.setArray(7, metadataArray(c, options.metadata()));
                    ps.setLong(8, id);
                    ps.setString(9, key);
                    ps.setLong(10, drawn);
                    try (ResultSet rs = ps.executeQuery()) {
                        rs.next();
                        long t = rs.getLong(1);
                        if (!rs.wasNull()) token = t;
                    }
                }
            }
        } catch (SQLException e) {
            if ("55P03".equals(e.getSQLState())) {
                pool.discard(c);
                return null;
            }
            throw e;
        }
        PgPool.networkTimeout(c, settings.timeout.toMillis());
        if (token == null) {
            // overtaken while waiting (or a new key, or a row of a fencing=false holder): we hold the
            // lock; record the holder with a fresh token, committed durably as on the fast path
            token = write(c, record, false, id, key, leaseId, options).token;
        }
        return token;
    }

    /** The {@code application_name} of a session holding {@code leaseId}: a prefix of the configured name, then the lease. */
    String marker(String leaseId) {
        return markerPrefix + leaseId;
    }

    /** The lease a session's {@code application_name} names, or null (idle, or not a latchkey session). */
    static String markedLeaseId(String applicationName) {
        int idLength = 36; // UUID.toString()
        if (applicationName == null || applicationName.length() < MARKER.length() + idLength) return null;
        int at = applicationName.length() - idLength - MARKER.length();
        return applicationName.startsWith(MARKER, at) ? applicationName.substring(at + MARKER.length()) : null;
    }

    /** Has the row of a lease taken without one written after {@link #RECORD_DELAY}, if still held then. */
    private void recordLater(AdvisoryLease lease) {
        unrecorded.add(lease);
        // one timer task per delay window, not one per lease: a busy key's acquisitions cost no timer wake-ups
        if (!recordingScheduled.get() && recordingScheduled.compareAndSet(false, true)) {
            runtime.later(RECORD_DELAY, this::recordHolders);
        }
    }

    private void recordHolders() {
        recordingScheduled.set(false);
        for (AdvisoryLease lease; (lease = unrecorded.poll()) != null; ) lease.recordHolder();
    }

    /** Writes the row of {@code lease} on its own session (which holds the lock); the caller keeps others off it. */
    void writeHolder(Connection session, AdvisoryLease lease, LeaseOptions options, long heldNanos) throws SQLException {
        try (PreparedStatement ps = session.prepareStatement(recordLater)) {
            ps.setString(1, options.owner());
            ps.setString(2, lease.leaseId());
            ps.setLong(3, heldNanos / 1000);
            ps.setLong(4, options.ttl().toMillis());
            ps.setArray(5, metadataArray(session, options.metadata()));
            ps.setLong(6, lease.lockId());
            ps.setString(7, lease.key());
            ps.executeUpdate();
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

    /**
     * Held advisory locks of this database matching {@code condition}, described from the table.
     * While a lease's row is still to be written by its manager (a {@code fencing=false} lease held
     * for less than {@link #RECORD_DELAY}), asks again, for up to the statement timeout; after that
     * such a lease is shown by its id and session alone.
     */
    private List<LockInfo> holders(String condition, Binder binder, String action, String forKey) {
        long deadline = System.nanoTime() + settings.timeout.toNanos();
        while (true) {
            List<LockInfo> out = new ArrayList<>();
            boolean unwritten = pool.call(action, c -> describe(c, condition, binder, forKey, out));
            if (!unwritten || System.nanoTime() - deadline >= 0) return out;
            try {
                Thread.sleep(RECORD_DELAY.toMillis() / 2);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return out;
            }
        }
    }

    /** Adds the holders to {@code out}; true if one of them is a lease whose row is not written yet. */
    private boolean describe(Connection c, String condition, Binder binder, String forKey, List<LockInfo> out)
            throws SQLException {
        boolean unwritten = false;
        try (PreparedStatement ps = c.prepareStatement(holderQuery + condition)) {
            binder.bind(ps);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    String key = rs.getString("key");
                    int pid = rs.getInt("pid");
                    String app = rs.getString("application_name");
                    String marked = markedLeaseId(app);
                    if (key == null) {
                        // an id no key of ours maps to: foreign code locked it
                        if (forKey != null) out.add(session(forKey, pid, app, null));
                        continue;
                    }
                    if (forKey != null && !forKey.equals(key)) {
                        out.add(new LockInfo(forKey, "holder of colliding key '" + key + "' (session pid " + pid + ")",
                                null, 0, null, null, null));
                        continue;
                    }
                    // the row describes this holding if it names the session's lease (or, for a session
                    // that names none, if it names the session)
                    boolean described = marked != null ? marked.equals(rs.getString("lease_id")) : rs.getInt("row_pid") == pid;
                    if (!described) {
                        unwritten |= marked != null;
                        out.add(session(key, pid, app, marked));
                        continue;
                    }
                    Instant acquired = instant(rs.getTimestamp("acquired_at"));
                    long ttl = rs.getLong("ttl_ms");
                    out.add(new LockInfo(key, rs.getString("owner"), marked != null ? marked : rs.getString("lease_id"),
                            rs.getLong("token"), acquired, acquired == null ? null : acquired.plusMillis(ttl),
                            metadataMap(rs.getArray("metadata"))));
                }
            }
        }
        return unwritten;
    }

    /** A holder known only by its session (and the lease it names, if any). */
    private static LockInfo session(String key, int pid, String app, String leaseId) {
        String name = leaseId != null || app == null ? "" : " (" + app + ")";
        return new LockInfo(key, "session pid " + pid + name, leaseId, 0, null, null, null);
    }

    @Override
    public boolean forceRelease(String key) {
        return terminateHolder(key, null);
    }

    /** Ends the holding session only if it names lease {@code leaseId} in its {@code application_name}. */
    @Override
    public boolean forceRelease(String key, String leaseId) {
        return terminateHolder(key, java.util.Objects.requireNonNull(leaseId, "leaseId"));
    }

    private boolean terminateHolder(String key, String leaseId) {
        prepare(key);
        long id = hash.applyAsLong(key);
        return pool.call("force-releasing '" + key + "'", c -> {
            // the two-argument form waits (up to 5 s) until the session is gone and its locks are free
            try (PreparedStatement ps = c.prepareStatement("SELECT l.pid, pg_terminate_backend(l.pid, 5000)"
                    + " FROM pg_locks l WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1"
                    + " AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())"
                    + " AND ((l.classid::int8 << 32) | l.objid::int8) = ?"
                    + (leaseId == null ? "" : " AND l.pid IN (SELECT pid FROM pg_stat_activity WHERE application_name = ?)"))) {
                ps.setLong(1, id);
                if (leaseId != null) ps.setString(2, marker(leaseId));
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
