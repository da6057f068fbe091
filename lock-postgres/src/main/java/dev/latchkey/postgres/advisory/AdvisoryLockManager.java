package dev.latchkey.postgres.advisory;

import dev.latchkey.Capability;
import dev.latchkey.Lease;
import dev.latchkey.LeaseOptions;
import dev.latchkey.LockBackendException;
import dev.latchkey.LockInfo;
import dev.latchkey.LockTimeoutException;
import dev.latchkey.postgres.shared.PgErrors;
import dev.latchkey.postgres.shared.PgLockManager;
import dev.latchkey.postgres.shared.PgPool;
import dev.latchkey.postgres.shared.PgSchema;
import dev.latchkey.postgres.shared.PgSettings;
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
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Queue;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.ToLongFunction;

/**
 * {@code mode=advisory}: a session-level advisory lock, held on a connection pinned for the
 * lease's life.
 *
 * <p><b>Guarantee.</b> PostgreSQL grants an advisory lock id to one session at a time, and a
 * session ends only after the lease it holds is invalid on its client ({@link AdvisorySessions}:
 * the database's timeouts are overridden, the server's own idle limit is TTL + TTL/5, poolers that
 * share sessions are refused), so at most one lease per key is valid. A holder that stops renewing
 * loses the lock at its TTL: its own manager closes the session then, or — frozen, crashed, cut off
 * — the server ends it TTL/5 later. When the server frees every lock at once (a restart, a crash, a
 * failover), no key held before is granted again until the longest TTL of the schema has passed,
 * since a lease from before may still be valid on a client that has not noticed yet; the holders
 * that can hear the server notice within {@link SessionWatch#INTERVAL}. Keys map to ids by the
 * first 8 bytes of SHA-256 — of the key in schema {@code public}, of the schema's name, a zero byte
 * and the key in any other, so that each schema is a lock space of its own; each id's key is
 * recorded in the table once and for good (its row is never deleted), so two keys that share an id
 * are refused with an error, never silently locked together. The fencing token comes from a
 * sequence in the same statement (and commit) that takes the lock, so it is durable before the
 * caller sees it — or, for a caller that waits, is drawn (durably) before the wait and used only if
 * it still exceeds the token the row records for the key, so that a hand-off need not wait for the
 * disk.
 *
 * <p><b>Who holds what</b> is {@link AdvisoryHolders}. With {@code fencing=false} the row is
 * written off the acquire path once this manager has recorded the key: acquire and release are then
 * one statement each, without a write, like a bare advisory lock; a lease still held
 * {@link #RECORD_DELAY} later has its row written in the background, and {@link #inspect} waits for
 * that (a lease released sooner is never written).
 *
 * <p><b>Model.</b> {@code model/pg-advisory.pml} is a spin model of this protocol (the session-bound
 * lock, idle limits, restarts and the registry era, terminated sessions, cut-off clients, the
 * session watch), checked by {@code scripts/model-check.sh}; {@code docs/model-checking.md} says
 * what it abstracts (fencing tokens, waiting, pools). A change to the protocol here belongs there too.
 */
public final class AdvisoryLockManager extends PgLockManager<AdvisorySession> {
    private static final Set<Capability> WITH_TOKENS = Set.copyOf(EnumSet.of(
            Capability.FENCING_TOKENS, Capability.LIST, Capability.NATIVE_WAIT, Capability.HOLDER_DEATH_DETECTION));
    private static final Set<Capability> WITHOUT_TOKENS = Set.copyOf(EnumSet.of(
            Capability.LIST, Capability.NATIVE_WAIT, Capability.HOLDER_DEATH_DETECTION));

    /** How long a {@code fencing=false} lease is held before its row is written (shorter ones never are). */
    static final Duration RECORD_DELAY = Duration.ofMillis(5);
    /** Keys this manager recorded for their ids, so that {@code fencing=false} may skip the row; bounded. */
    private static final int RECORDED_KEYS_MAX = 4096;

    private final ToLongFunction<String> hash;
    /** The configured {@code application_name}, restored when a lease ends. */
    final String idleName;
    final AdvisorySessions sessions;
    final AdvisoryHolders holders;
    final SessionWatch watch;
    private final Map<Long, String> recordedKeys = new ConcurrentHashMap<>();
    private final Queue<AdvisoryLease> unrecorded = new ConcurrentLinkedQueue<>();
    private final AtomicBoolean recordingScheduled = new AtomicBoolean();
    /** Writes the row of a lease taken by a {@code take} statement (the token column stays). */
    private final String recordLater;
    /** Unlocks and restores the configured {@code application_name}. */
    final String release;

    public AdvisoryLockManager(PgSettings settings, LockContext context) {
        this(settings, context, key -> lockId(settings.schemaName, key));
    }

    /** Test hook: {@code hash} replaces the key → lock id function (to force collisions). */
    AdvisoryLockManager(PgSettings settings, LockContext context, ToLongFunction<String> hash) {
        super(settings, context, AdvisorySession::new);
        this.hash = hash;
        this.idleName = settings.properties.getProperty("ApplicationName");
        this.sessions = new AdvisorySessions(settings, context.time(), runtime.events());
        this.holders = new AdvisoryHolders(this, idleName);
        this.watch = new SessionWatch(runtime);
        recordLater = "WITH s AS (SELECT set_config('synchronous_commit', 'off', true))"
                + " UPDATE " + settings.table + " SET owner = ?, lease_id = ?, pid = pg_backend_pid(),"
                + " acquired_at = clock_timestamp() - ? * interval '1 microsecond', ttl_ms = ?, metadata = ?"
                + " FROM s WHERE id = ? AND key = ?";
        release = "SELECT pg_advisory_unlock(?), set_config('application_name', ?, false)";
    }

    /**
     * The key → advisory lock id mapping: the first 8 bytes of SHA-256 of the UTF-8 key in schema
     * {@code public} (as in earlier versions), of the UTF-8 schema name, a zero byte and the key in
     * any other schema.
     */
    static long lockId(String schema, String key) {
        String named = schema.equals("public") ? key : schema + '\0' + key;
        byte[] digest = SHA_256.get().digest(named.getBytes(StandardCharsets.UTF_8));
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
        checkTtl(options.ttl());
        long called = context.time().nanoTime();
        Lease lease = attempt(prepare(key), options, null);
        if (lease == null) holders.refused(key, hash.applyAsLong(key), called, false);
        return Optional.ofNullable(lease);
    }

    @Override
    public Lease acquire(String key, Duration maxWait, LeaseOptions options) {
        checkTtl(options.ttl());
        prepare(key);
        long called = context.time().nanoTime();
        Lease lease = attempt(key, options, maxWait.toMillis() < 1 ? null : maxWait);
        if (lease != null) return lease;
        throw new LockTimeoutException(key, maxWait, holders.refused(key, hash.applyAsLong(key), called, true));
    }

    static void checkTtl(Duration ttl) {
        if (ttl.compareTo(AdvisorySessions.MAX_TTL) > 0) {
            throw new IllegalArgumentException("mode=advisory takes TTLs up to " + AdvisorySessions.MAX_TTL.toDays()
                    + " days (the server's idle limit of a session, TTL + TTL/5, is an int of milliseconds); was " + ttl);
        }
    }

    /** One acquisition's session and progress. */
    private final class Attempt {
        final String key;
        final long id;
        final String leaseId = UUID.randomUUID().toString();
        final LeaseOptions options;
        final long deadlineNanos;
        AdvisorySession session;
        /** The token of the acquisition, once the lock is held. */
        long token;
        /** When the lease's validity starts: the try's send time, or a wait's grant. */
        long validFromNanos;

        Attempt(String key, LeaseOptions options, Duration wait) {
            this.key = key;
            this.id = hash.applyAsLong(key);
            this.options = options;
            this.deadlineNanos = wait == null ? 0 : context.time().nanoTime() + wait.toNanos();
        }

        Connection c() {
            return session.connection;
        }

        /** What is left of the wait, or null for a try. */
        Duration waitLeft() {
            return deadlineNanos == 0 ? null : Duration.ofNanos(Math.max(0, deadlineNanos - context.time().nanoTime()));
        }
    }

    /**
     * One acquisition on a fresh or idle connection, which becomes the lease's pinned session;
     * {@code wait == null}: do not wait. Returns null when the lock is held (or the wait ran out).
     */
    private Lease attempt(String key, LeaseOptions options, Duration wait) {
        recordTtl(options.ttl());
        Attempt a = new Attempt(key, options, wait);
        a.session = pool.borrow();
        boolean pinned = false;
        try {
            sessions.ready(a.session);
            sessions.limits(a.session, options.ttl());
            // without tokens, once this manager has recorded the key for its id, the row can wait
            boolean bare = !settings.fencing && key.equals(recordedKeys.get(a.id)) && sessions.restartWindowLeftNanos() == 0;
            boolean held = sessions.restartWindowLeftNanos() > 0 ? acquireInRestartWindow(a) : acquire(a, bare);
            if (!held) return null;
            AdvisoryLease lease = new AdvisoryLease(this, a.session, a.id, key, a.leaseId, a.token, options,
                    a.validFromNanos);
            pinned = true;
            if (bare) {
                recordLater(lease);
            } else if (!settings.fencing) {
                if (recordedKeys.size() >= RECORDED_KEYS_MAX) recordedKeys.clear();
                recordedKeys.put(a.id, key);
            }
            return lease;
        } catch (SQLException e) {
            // closing ends the session, and with it any lock this statement took; a lost connection
            // (server restarted?) also drops the idle ones, so the next call connects afresh
            if (a.session != null) pool.giveBack(a.session, PgErrors.connectionLost(e) || PgPool.isClosed(a.c()));
            a.session = null;
            throw PgErrors.translate(settings, "acquiring '" + key + "'", e);
        } catch (RuntimeException e) {
            if (a.session != null) pool.discard(a.session); // a session refused, or whose lock state is unknown
            a.session = null;
            throw e;
        } finally {
            if (a.session != null && !pinned) pool.giveBack(a.session, false);
        }
    }

    /** Makes sure the schema's registry covers {@code ttl} before a lease of it is taken (durably, once per longer TTL). */
    void recordTtl(Duration ttl) {
        long millis = ttl.toMillis();
        if (millis <= registeredTtlMillis) return;
        registeredTtlMillis = pool.call("recording the TTL " + ttl + " in " + settings.registry,
                c -> PgSchema.recordTtl(c, settings, millis));
    }

    /** How a wait in the server ended. */
    private enum Waited { GRANTED, TIMED_OUT, HELD_BEFORE_RESTART }

    /** Outside a restart window: the lock now, or (with a wait) queued in the server. False when busy or timed out. */
    private boolean acquire(Attempt a, boolean bare) throws SQLException {
        AdvisorySql sql = a.session.sql;
        a.validFromNanos = context.time().nanoTime();
        if (bare) {
            if (take(a, sql, false)) return true;
            return a.deadlineNanos != 0 && awaitLock(a, sql, null, true) == Waited.GRANTED;
        }
        if (a.deadlineNanos == 0 || settings.fencing) {
            Written w = write(a, a.deadlineNanos == 0 ? sql.acquireTry : sql.acquireTryOrDraw, a.deadlineNanos != 0);
            if (w.got) {
                a.token = w.token;
                return true;
            }
            if (w.recorded != null && !w.recorded.equals(a.key)) throw collision(a.key, a.id, w.recorded);
            return a.deadlineNanos != 0 && awaitLock(a, sql, w.drawn, false) == Waited.GRANTED;
        }
        return awaitLock(a, sql, null, false) == Waited.GRANTED;
    }

    /**
     * Inside a restart window, with statements that refuse a key held before the server's start
     * ({@link AdvisorySql}): a try; or a wait queued in the server, which for such a key is refused at
     * once and tried again every {@code poll} until the window ends. Then as {@link #acquire}.
     */
    private boolean acquireInRestartWindow(Attempt a) throws SQLException {
        while (true) {
            long windowLeft = sessions.restartWindowLeftNanos();
            if (windowLeft == 0) return acquire(a, false);
            AdvisorySql sql = sessions.sql(a.session);
            a.validFromNanos = context.time().nanoTime();
            if (a.deadlineNanos == 0) {
                Written w = write(a, sql.acquireTry, false);
                if (w.recorded != null && !w.recorded.equals(a.key)) throw collision(a.key, a.id, w.recorded);
                a.token = w.token;
                return w.got;
            }
            Waited waited = awaitLock(a, sql, null, false);
            if (waited != Waited.HELD_BEFORE_RESTART) return waited == Waited.GRANTED;
            long pause = Math.min(Math.min(settings.poll.toNanos(), a.waitLeft().toNanos()), windowLeft);
            if (pause <= 0) return false;
            try {
                TimeUnit.NANOSECONDS.sleep(pause);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new LockBackendException("interrupted while waiting for '" + a.key + "' at " + settings.endpoint, false, e);
            }
        }
    }

    /** What a statement of the {@code acquireTry} family returned. */
    private static final class Written {
        boolean got;
        long token;
        String recorded;
        Long drawn;
    }

    /**
     * Runs a statement of the {@code acquireTry} family. If it took the lock but the id is recorded
     * for another key, it unlocks and throws the collision.
     */
    private Written write(Attempt a, String sql, boolean drawsAhead) throws SQLException {
        Written w = new Written();
        Connection c = a.c();
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            ps.setLong(1, a.id);
            ps.setString(2, holders.marker(a.leaseId));
            ps.setLong(3, a.id);
            ps.setString(4, a.key);
            ps.setString(5, a.options.owner());
            ps.setString(6, a.leaseId);
            ps.setLong(7, a.options.ttl().toMillis());
            ps.setArray(8, metadataArray(c, a.options.metadata()));
            ps.setLong(9, a.id);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                w.got = rs.getBoolean(1);
                if (rs.wasNull()) throw sessions.notPinned("a statement of this client ran on another client's server session");
                boolean won = rs.getBoolean(2);
                w.token = rs.getLong(3);
                w.recorded = rs.getString(4);
                if (drawsAhead) {
                    long drawn = rs.getLong(5);
                    w.drawn = rs.wasNull() ? null : drawn;
                }
                if (w.got && !won) {
                    unlock(c, a.id);
                    throw collision(a.key, a.id, w.recorded);
                }
            }
        }
        return w;
    }

    /** Runs {@code takeTry} or {@code takeWait}: the lock, and the lease's name, nothing written. */
    private boolean take(Attempt a, AdvisorySql sql, boolean waits) throws SQLException {
        try (PreparedStatement ps = a.c().prepareStatement(waits ? sql.takeWait : sql.takeTry)) {
            ps.setLong(waits ? 2 : 1, a.id);
            ps.setString(waits ? 1 : 2, holders.marker(a.leaseId));
            try (ResultSet rs = ps.executeQuery()) {
                String name = rs.next() ? rs.getString(1) : null;
                if ("".equals(name)) throw sessions.notPinned("a statement of this client ran on another client's server session");
                return name != null;
            }
        }
    }

    /**
     * Waits on the attempt's session for the lock, under {@code lock_timeout} = what is left of the
     * wait, and records the holder: with the token {@code drawn} ahead if it is still the key's
     * highest, else with a fresh one (durable, one more round trip); without a token if
     * {@code fencing=false}; not at all if {@code bare} (the caller has it recorded later). When the
     * wait runs out the session is closed, not reused: had the timeout hit the row write, the
     * session would hold the lock.
     */
    private Waited awaitLock(Attempt a, AdvisorySql sql, Long drawn, boolean bare) throws SQLException {
        Connection c = a.c();
        long waitMillis = Math.max(1, a.waitLeft().toMillis());
        try (PreparedStatement ps = c.prepareStatement("SELECT set_config('lock_timeout', ?, false)")) {
            ps.setString(1, Long.toString(Math.min(Integer.MAX_VALUE, waitMillis)));
            ps.execute();
        }
        PgPool.networkTimeout(c, waitMillis + settings.timeout.toMillis());
        Long token;
        try {
            if (bare) {
                take(a, sql, true);
                token = 0L;
            } else if (drawn == null) {
                Written w = write(a, sql.acquireWait, false);
                if (!w.got) {
                    PgPool.networkTimeout(c, settings.timeout.toMillis());
                    return Waited.HELD_BEFORE_RESTART; // refused without waiting (restart window)
                }
                token = w.token;
            } else {
                token = writeDrawn(a, sql, drawn);
            }
        } catch (SQLException e) {
            if ("55P03".equals(e.getSQLState())) {
                pool.discard(a.session);
                a.session = null;
                return Waited.TIMED_OUT;
            }
            throw e;
        }
        a.validFromNanos = context.time().nanoTime(); // the grant: the request went out long ago
        PgPool.networkTimeout(c, settings.timeout.toMillis());
        if (token == null) {
            // overtaken while waiting (or a new key, or a row of a fencing=false holder): we hold the
            // lock; record the holder with a fresh token, committed durably as on the fast path
            token = write(a, sql.record, false).token;
        }
        a.token = token;
        return Waited.GRANTED;
    }

    /** Runs {@code acquireWaitDrawn}: the token, or null if the row did not prove the drawn one the highest. */
    private Long writeDrawn(Attempt a, AdvisorySql sql, long drawn) throws SQLException {
        Connection c = a.c();
        try (PreparedStatement ps = c.prepareStatement(sql.acquireWaitDrawn)) {
            ps.setLong(1, a.id);
            ps.setString(2, holders.marker(a.leaseId));
            ps.setString(3, a.options.owner());
            ps.setString(4, a.leaseId);
            ps.setLong(5, drawn);
            ps.setLong(6, a.options.ttl().toMillis());
            ps.setArray(7, metadataArray(c, a.options.metadata()));
            ps.setLong(8, a.id);
            ps.setString(9, a.key);
            ps.setLong(10, drawn);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                long t = rs.getLong(1);
                Long token = rs.wasNull() ? null : t;
                rs.getBoolean(2);
                if (rs.wasNull()) throw sessions.notPinned("a statement of this client ran on another client's server session");
                return token;
            }
        }
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
        return holders.inspect(key, hash.applyAsLong(key));
    }

    @Override
    public List<LockInfo> list(String prefix) {
        prepare();
        return holders.list(prefix);
    }

    @Override
    public boolean forceRelease(String key) {
        prepare(key);
        return holders.terminate(key, hash.applyAsLong(key), null);
    }

    /** Ends the holding session only if it names lease {@code leaseId} in its {@code application_name}. */
    @Override
    public boolean forceRelease(String key, String leaseId) {
        Objects.requireNonNull(leaseId, "leaseId");
        prepare(key);
        return holders.terminate(key, hash.applyAsLong(key), leaseId);
    }

    @Override
    public Set<Capability> capabilities() {
        return settings.fencing ? WITH_TOKENS : WITHOUT_TOKENS;
    }
}
