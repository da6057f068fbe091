package dev.latchkey.postgres.advisory;

import dev.latchkey.postgres.shared.PgSchema;
import dev.latchkey.postgres.shared.PgSettings;

/**
 * The statements of {@code mode=advisory} for one kind of session. The plain set is what a direct
 * connection outside a restart window runs, and what the benchmarks measure; two guards can be
 * compiled in, each only where it is needed:
 *
 * <ul>
 *   <li>{@code mark} (a connection behind a pooler): every statement that takes the lock first checks
 *       that the server session carries this client's mark ({@code latchkey.session}), and takes
 *       nothing if not — a pooler that hands the session to another client can never make two
 *       clients share one session lock. {@code got} is then NULL (or {@code ''} for the
 *       {@code take} statements), which the manager reports as a session that is not pinned.</li>
 *   <li>{@code restartEpoch} (the first longest-TTL after a server start, see
 *       {@link AdvisorySessions}): the statements that take the lock refuse at once ({@code got}
 *       false, without waiting) a key whose row records a holder from before that start, whose
 *       lease may still be valid; only then is the row read.</li>
 * </ul>
 */
final class AdvisorySql {
    /** Takes the lock if free; if won, records the holder (and draws a fresh token). */
    final String acquireTry;
    /** {@link #acquireTry}, or when the lock is busy (fencing only) draws a token ahead, for the wait. */
    final String acquireTryOrDraw;
    /** Waits for the lock, then records the holder ({@code fencing=false}, or no token drawn ahead). */
    final String acquireWait;
    /** Waits for the lock, then records the holder with the token drawn ahead, if it is still the highest. */
    final String acquireWaitDrawn;
    /** Records the holder with a fresh token once the lock is held (when the token drawn ahead was overtaken). */
    final String record;
    /** {@code fencing=false}, key recorded: takes the lock if free, writes nothing. */
    final String takeTry;
    /** {@code fencing=false}, key recorded: waits for the lock, writes nothing. */
    final String takeWait;
    /** Sets the server's idle, TCP-retransmission and keepalive limits of the session for a TTL. */
    final String limits;

    /**
     * @param mark         the session mark this client set, or null on a direct connection
     * @param restartEpoch seconds since the epoch (digits and a dot) of the server's last start, or null
     */
    AdvisorySql(PgSettings settings, String mark, String restartEpoch) {
        if (mark != null && !mark.matches("[0-9a-f]{32}")) throw new IllegalArgumentException("session mark");
        if (restartEpoch != null && !restartEpoch.matches("[0-9]+(\\.[0-9]+)?")) throw new IllegalArgumentException("epoch");
        String t = settings.table;
        String seq = PgSchema.sequence(settings);
        String token = settings.fencing ? "nextval('" + seq + "')" : "NULL::bigint";
        String own = mark == null ? null : "current_setting('latchkey.session', true) IS NOT DISTINCT FROM '" + mark + "'";
        String tryLock = lockCte(t, own, restartEpoch, "pg_try_advisory_lock(?) AS got", "pg_try_advisory_lock(i.id)");
        String waitLock = lockCte(t, own, restartEpoch, "true AS got FROM pg_advisory_lock(?)",
                "(SELECT true FROM pg_advisory_lock(i.id))");
        // l names the lease in application_name, only if won
        String naming = " l AS (SELECT got, CASE WHEN got THEN set_config('application_name', ?, false) END AS app";
        // the hand-off's row write need not wait for the disk: its token is durable already
        String lazyCommit = ", set_config('synchronous_commit', 'off', true) AS lazy";
        // every other row write commits durably: a row that says a key was held must survive a crash,
        // for the restart guard to see it (and with fencing, for the token)
        String l = naming + " FROM l0)";
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
        acquireWaitDrawn = waitLock + naming + lazyCommit + " FROM l0),"
                + " u AS (UPDATE " + t + " AS a SET owner = ?, lease_id = ?, token = ?, pid = pg_backend_pid(),"
                + "  acquired_at = clock_timestamp(), ttl_ms = ?, metadata = ?"
                + "  FROM l WHERE a.id = ? AND a.key = ? AND a.token < ? RETURNING a.token)"
                + " SELECT u.token, l.got FROM l LEFT JOIN u ON true";
        record = "WITH l0 AS (SELECT ?::bigint IS NOT NULL AS got)," + l + tail + from;
        // CASE evaluates its branch only when the lock was won: the lease's name, else NULL ('' = not our session)
        String setName = "set_config('application_name', ?, false)";
        takeTry = own == null
                ? "SELECT CASE WHEN pg_try_advisory_lock(?) THEN " + setName + " END"
                : "SELECT CASE WHEN NOT (" + own + ") THEN '' WHEN pg_try_advisory_lock(?) THEN " + setName + " END";
        takeWait = own == null
                ? "SELECT " + setName + " FROM pg_advisory_lock(?)"
                : "SELECT CASE WHEN " + own + " THEN (SELECT " + setName + " FROM pg_advisory_lock(?)) ELSE '' END";
        String setLimits = "concat(set_config('idle_session_timeout', ?, false), set_config('tcp_user_timeout', ?, false),"
                + " set_config('tcp_keepalives_idle', ?, false), set_config('tcp_keepalives_interval', ?, false),"
                + " set_config('tcp_keepalives_count', ?, false))";
        limits = own == null ? "SELECT " + setLimits : "SELECT CASE WHEN " + own + " THEN " + setLimits + " END";
    }

    /**
     * The first CTE, {@code l0(got)}: the bare lock expression, or — with guards — a CASE that
     * yields NULL on another client's session, false for a key held before the restart, else the lock.
     */
    private static String lockCte(String table, String own, String restartEpoch, String bare, String guarded) {
        if (own == null && restartEpoch == null) return "WITH l0 AS (SELECT " + bare + "),";
        return "WITH l0 AS (SELECT CASE"
                + (own == null ? "" : " WHEN NOT (" + own + ") THEN NULL")
                + (restartEpoch == null ? "" : " WHEN EXISTS (SELECT 1 FROM " + table + " r WHERE r.id = i.id"
                        + " AND (r.acquired_at IS NULL OR r.acquired_at < to_timestamp(" + restartEpoch + "))) THEN false")
                + " ELSE " + guarded + " END AS got FROM (SELECT ?::bigint AS id) i),";
    }
}
