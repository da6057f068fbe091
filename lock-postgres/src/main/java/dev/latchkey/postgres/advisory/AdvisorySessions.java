package dev.latchkey.postgres.advisory;

import dev.latchkey.LockBackendException;
import dev.latchkey.postgres.shared.PgDriver;
import dev.latchkey.postgres.shared.PgPool;
import dev.latchkey.postgres.shared.PgSettings;
import dev.latchkey.spi.LockEvents;
import dev.latchkey.spi.TimeSource;
import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.postgresql.PGConnection;
import org.postgresql.core.BaseConnection;
import org.postgresql.core.ServerVersion;

/**
 * Makes the connections of {@code mode=advisory} fit to pin a lease, once per connection, and
 * tracks the restart window.
 *
 * <p><b>Guarantee.</b> A session that holds a lease is ended by the server only after the lease is
 * invalid on its client, and not much later:
 * <ul>
 *   <li><b>Immune to the database's and role's timeouts</b>: {@code statement_timeout},
 *       {@code idle_in_transaction_session_timeout} (and {@code transaction_timeout} where it exists)
 *       are 0 on the session, and {@code idle_session_timeout} is ours.</li>
 *   <li><b>Server-side liveness</b> ({@link #limits}, before each lock with a TTL the session was not
 *       set up for): {@code idle_session_timeout} = TTL + TTL/5. Each statement of the lease resets
 *       that timer when it ends, and the lease's validity counts from when its last renewal was
 *       <em>sent</em>, TTL/5 before the TTL: so the server ends a holder that stopped talking (a frozen
 *       process, a dead host, a partition) between its TTL and TTL + TTL/5 after its last renewal
 *       was sent (plus that statement's own duration), when the lease has been invalid for at least
 *       TTL/5 + TTL/5. {@code tcp_user_timeout} and the server's TCP keepalives (idle, interval,
 *       count) are set to end a connection whose peer stopped answering no earlier than that either,
 *       so a partition never frees the lock early, and not hours late ({@code tcp_keepalives_*}
 *       default to the OS's 2 h 11 min). ({@link PgPool}'s {@code client_connection_check_interval}
 *       of 1 s ends a statement whose client has gone, so a waiter that died does not take the lock
 *       in its stead.)
 *       Needs PostgreSQL 14 or later ({@code idle_session_timeout}); older servers are refused.</li>
 *   <li><b>A pooler that does not pin</b>: a server whose pid differs from the one the connection
 *       announced (PgBouncer answers with its own cancel key) sits behind a protocol-level pooler.
 *       Such a connection marks its server session ({@code latchkey.session}, a random value), and is
 *       refused if the session already carries another client's mark, or if a second, fresh
 *       connection through the pooler sees this client's mark — the pooler hands one server session
 *       to several clients ({@code pool_mode=transaction} or {@code statement}). Every lock statement
 *       on such a connection then checks the mark in the same statement ({@link AdvisorySql}), so
 *       two clients never share one session lock, even where the probe could not tell. Direct
 *       connections and TCP forwarders (which pass the server's pid through) pay nothing; session
 *       pooling resets the mark between clients ({@code DISCARD ALL}) and passes.</li>
 *   <li><b>Restart window</b>: a server start, a crash (every backend restarted: the bgwriter's stats
 *       are reset) or a promotion (a new WAL timeline, recorded in the registry when first seen) frees
 *       every advisory lock at once. Until the longest TTL recorded in the schema's registry has passed
 *       since then, {@link #sql} compiles in the guard that refuses keys whose row records a holder
 *       from before ({@link AdvisorySql}); afterwards the plain statements run again. The registry's
 *       longest TTL is raised, durably, before a lease with a longer one is taken, so it covers every
 *       lease granted before the start. A manager logs one WARNING (through {@link LockEvents}) for
 *       each window it sees, when it first sees it.</li>
 * </ul>
 */
final class AdvisorySessions {
    /** The longest TTL whose idle limit (TTL + TTL/5, in ms) PostgreSQL's int settings hold. */
    static final Duration MAX_TTL = Duration.ofMillis((long) Integer.MAX_VALUE * 5 / 6);
    /** Linux's upper bound for TCP_KEEPIDLE and TCP_KEEPINTVL, in seconds. */
    private static final long MAX_KEEPALIVE_SECONDS = 32767;
    /** Makes the session immune to the database's and role's timeouts; a text, never NULL. */
    private static final String SESSION_SETTINGS = "concat(set_config('statement_timeout', '0', false),"
            + " set_config('idle_in_transaction_session_timeout', '0', false),"
            + " (SELECT set_config(name, '0', false) FROM pg_settings WHERE name = 'transaction_timeout'))";

    /**
     * A restart window: until when (local monotonic clock; and as the server's wall-clock instant, informational),
     * the start it follows (as the server's epoch text and as an instant), and its guarded statements.
     */
    record RestartWindow(long untilNanos, Instant until, String epoch, Instant since, AdvisorySql guarded) {}

    /** The {@link LockEvents} reason of a key kept busy by the restart window. */
    static final String RESTART_GUARD = "restart-guard";

    private final PgSettings settings;
    private final TimeSource time;
    private final LockEvents events;
    final AdvisorySql plain;
    private final String checkSql;
    /** The latest restart window seen (null: none yet); over once its time has passed. */
    private final AtomicReference<RestartWindow> window = new AtomicReference<>();

    AdvisorySessions(PgSettings settings, TimeSource time, LockEvents events) {
        this.settings = settings;
        this.time = time;
        this.events = events;
        this.plain = new AdvisorySql(settings, null, null);
        String reg = settings.registry;
        // The era: the latest of the server's start, its last crash (stats reset on crash recovery) and the
        // first sight of its WAL timeline. A new timeline is stamped once, after every row it may have
        // replicated (their clock may be ahead); a snapshot that missed another client's stamp says "now".
        checkSql = "WITH cur AS (SELECT ('x' || substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8))::bit(32)::int AS tli),"
                + " stamp AS (UPDATE " + reg + " r SET timeline = cur.tli, timeline_seen_at = CASE WHEN r.timeline IS NOT NULL"
                + "  THEN greatest(clock_timestamp(), (SELECT max(a.acquired_at) + interval '1 microsecond' FROM " + settings.table + " a)) END"
                + "  FROM cur WHERE r.timeline IS DISTINCT FROM cur.tli RETURNING r.timeline_seen_at),"
                + " era AS (SELECT greatest(pg_postmaster_start_time(), pg_stat_get_bgwriter_stat_reset_time(),"
                + "  CASE WHEN EXISTS (SELECT 1 FROM stamp) THEN (SELECT s.timeline_seen_at FROM stamp s)"
                + "   WHEN r.timeline IS NULL OR r.timeline = cur.tli THEN r.timeline_seen_at ELSE clock_timestamp() END) AS since,"
                + "  r.max_ttl_ms FROM " + reg + " r, cur)"
                + " SELECT pg_backend_pid(), current_setting('latchkey.session', true), extract(epoch FROM era.since)::text,"
                // a window only while a row may predate the era: a fresh server (or table) has none
                + "  CASE WHEN era.since + era.max_ttl_ms * interval '1 millisecond' > clock_timestamp()"
                + "   AND EXISTS (SELECT 1 FROM " + settings.table + " a WHERE a.acquired_at IS NULL OR a.acquired_at < era.since)"
                + "   THEN ceil(extract(epoch FROM era.since - clock_timestamp()) * 1000 + era.max_ttl_ms)::bigint ELSE 0 END,"
                + "  CASE WHEN pg_backend_pid() = ? THEN " + SESSION_SETTINGS + " END, era.max_ttl_ms"
                + " FROM era";
    }

    /**
     * Checks and sets up {@code s} on its first use (one round trip on a direct connection).
     *
     * @throws LockBackendException (not retriable) for a server before 14 or a pooler that shares
     *         server sessions; the caller discards the connection
     */
    void ready(AdvisorySession s) throws SQLException {
        if (s.checked) return;
        Connection c = s.connection;
        BaseConnection base = c.unwrap(BaseConnection.class);
        if (!base.haveMinimumServerVersion(ServerVersion.v14)) {
            throw new LockBackendException("PostgreSQL at " + settings.endpoint + " is version " + c.getMetaData().getDatabaseProductVersion()
                    + "; mode=advisory needs 14 or later, whose idle_session_timeout ends the session of a holder that"
                    + " stopped talking (older servers keep its lock for as long as its connection looks alive, hours"
                    + " when its host is gone). Use mode=lease on this server", false);
        }
        int announced = c.unwrap(PGConnection.class).getBackendPID();
        int pid;
        String foreignMark;
        String epoch;
        long windowMillis;
        long maxTtlMillis;
        try (PreparedStatement ps = c.prepareStatement(checkSql)) {
            ps.setInt(1, announced);
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next()) throw new SQLException("the registry " + settings.registry + " has no row", "55000");
                pid = rs.getInt(1);
                foreignMark = rs.getString(2);
                epoch = rs.getString(3);
                windowMillis = rs.getLong(4);
                maxTtlMillis = rs.getLong(6);
            }
        }
        if (pid == announced) {
            s.sql = plain;
        } else {
            // a pooler answers for the server: prove this server session is ours alone before using it
            if (foreignMark != null && !foreignMark.isEmpty()) throw notPinned("its server session carries another client's mark");
            String mark = UUID.randomUUID().toString().replace("-", "");
            s.sql = new AdvisorySql(settings, mark, null);
            s.mark = mark;
            markAndProbe(c, mark);
        }
        s.readsWithoutWaiting = PgDriver.skipPeek(c);
        if (windowMillis > 0) {
            RestartWindow w = window.get();
            if (w == null || !epoch.equals(w.epoch)) opened(w, epoch, windowMillis, maxTtlMillis);
        }
        s.checked = true;
    }

    /**
     * A new restart window of {@code windowMillis} (by the server's clock, the longest TTL
     * {@code maxTtlMillis} after the start at {@code epoch}), replacing {@code seen}; warned of by the
     * one connection that records it (several may see it at once).
     */
    private void opened(RestartWindow seen, String epoch, long windowMillis, long maxTtlMillis) {
        Instant since = Instant.ofEpochMilli(new BigDecimal(epoch).movePointRight(3).longValue());
        Instant until = since.plusMillis(maxTtlMillis); // the server's instant: every manager shows the same
        RestartWindow fresh = new RestartWindow(time.nanoTime() + TimeUnit.MILLISECONDS.toNanos(windowMillis), until,
                epoch, since, new AdvisorySql(settings, null, epoch));
        if (!window.compareAndSet(seen, fresh)) return;
        events.storeWaitBegan(RESTART_GUARD, until, "PostgreSQL at " + settings.endpoint + " started at " + since
                + " (a restart, a crash or a failover), which freed every advisory lock; no key held before then is"
                + " granted again until the longest TTL recorded in " + settings.registry + " has passed, since a lease"
                + " from before may still be valid on a client that has not noticed");
    }

    /** Marks the session behind a pooler, proves no other client sees the mark, then sets it up as a direct one is. */
    private void markAndProbe(Connection c, String mark) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT set_config('latchkey.session', ?, false)")) {
            ps.setString(1, mark);
            ps.execute();
        }
        String seen;
        try (Connection probe = PgPool.connect(settings);
             PreparedStatement ps = probe.prepareStatement("SELECT current_setting('latchkey.session', true)");
             ResultSet rs = ps.executeQuery()) {
            rs.next();
            seen = rs.getString(1);
        }
        if (mark.equals(seen)) throw notPinned("another connection through it was handed the same server session");
        try (PreparedStatement ps = c.prepareStatement("SELECT CASE WHEN current_setting('latchkey.session', true) = ?"
                + " THEN " + SESSION_SETTINGS + " END")) {
            ps.setString(1, mark);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                if (rs.getString(1) == null) throw notPinned("its next statement ran on another server session");
            }
        }
    }

    /**
     * Sets the server's limits of {@code s} for a lease of {@code ttl}, if it does not carry them
     * yet: after a silent TTL + TTL/5 the server ends the session (see the class comment).
     */
    void limits(AdvisorySession s, Duration ttl) throws SQLException {
        long ttlMillis = ttl.toMillis();
        if (s.limitsForTtlMillis == ttlMillis) return;
        long limitMillis = ttlMillis + ttlMillis / 5;
        long idleSeconds = Math.min(MAX_KEEPALIVE_SECONDS, ceilDiv(ttlMillis, 1000));
        long restSeconds = Math.max(0, ceilDiv(limitMillis, 1000) - idleSeconds);
        long count = Math.max(2, ceilDiv(restSeconds, MAX_KEEPALIVE_SECONDS));
        long interval = Math.max(1, ceilDiv(restSeconds, count));
        try (PreparedStatement ps = s.connection.prepareStatement(s.sql.limits)) {
            ps.setString(1, limitMillis + "ms");
            ps.setString(2, limitMillis + "ms");
            ps.setString(3, idleSeconds + "s");
            ps.setString(4, interval + "s");
            ps.setString(5, Long.toString(count));
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                if (rs.getString(1) == null) throw notPinned("its next statement ran on another server session");
            }
        }
        s.limitsForTtlMillis = ttlMillis;
        s.serverIdleLimitNanos = TimeUnit.MILLISECONDS.toNanos(limitMillis);
    }

    /** The statements for {@code s} now: with the restart guard inside a restart window. */
    AdvisorySql sql(AdvisorySession s) {
        RestartWindow w = window();
        if (w == null) return s.sql;
        return s.mark == null ? w.guarded : new AdvisorySql(settings, s.mark, w.epoch);
    }

    /** The restart window in force now, or null outside one. */
    RestartWindow window() {
        RestartWindow w = window.get();
        return w == null || time.nanoTime() - w.untilNanos >= 0 ? null : w;
    }

    /** How long the restart window still lasts (0 outside one). */
    long restartWindowLeftNanos() {
        RestartWindow w = window.get();
        return w == null ? 0 : Math.max(0, w.untilNanos - time.nanoTime());
    }

    LockBackendException notPinned(String evidence) {
        return new LockBackendException("PostgreSQL at " + settings.endpoint + ": mode=advisory needs a server session"
                + " of its own for each lease, but the connection pooler in front of the server shares server sessions"
                + " between clients (" + evidence + "; PgBouncer pool_mode=transaction or statement does this): a session"
                + " lock taken there would belong to whichever client is handed that session next. Use mode=lease, or a"
                + " port or database the pooler serves with pool_mode=session", false);
    }

    private static long ceilDiv(long a, long b) {
        return -Math.floorDiv(-a, b);
    }
}
