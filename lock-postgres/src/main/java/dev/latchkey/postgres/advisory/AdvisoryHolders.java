package dev.latchkey.postgres.advisory;

import dev.latchkey.LockBackendException;
import dev.latchkey.LockInfo;
import dev.latchkey.postgres.shared.PgLockManager;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * Who holds which advisory lock, and breaking a holder: {@code pg_locks} joined with
 * {@code pg_stat_activity} and the lock table. A holding session names its lease in its
 * {@code application_name} ({@link #marker}), set by the statement that takes the lock and reset by
 * the one that releases it; the row describes the holding only if its lease id is the one the
 * session names (for a session that names none — other software, an older Latchkey — only if its
 * backend pid is the holder's). A holding's {@code expiresAt} is a TTL after the session's last
 * statement ended ({@code pg_stat_activity.state_change}): every statement of a held session is its
 * lease's (the acquisition, renewals, the row write), so it moves with each renewal at no cost to the
 * holder; a role that may not see the holder's activity (another role without
 * {@code pg_read_all_stats}) gets the acquisition's TTL instead. Breaking a holder ends its session:
 * the server frees its locks at once, and the broken lease learns it within {@link SessionWatch#INTERVAL}.
 *
 * <p><b>The restart guard</b> ({@link AdvisorySessions}) holds no lock a server shows, yet keeps every
 * key held before the server's start busy until the window ends: such a key is reported as held by
 * the guard ({@link #guard}: no lease, no token, {@code expiresAt} = the window's end, the owner text
 * says so), by {@code inspect}, {@code list} and a refused acquisition alike, and each acquisition the
 * guard refused is reported as a store wait ({@link dev.latchkey.spi.LockEvents#storeWait}).
 */
final class AdvisoryHolders {
    /** {@code application_name} is cut at 63 bytes: room for the lease id and a prefix of the configured name. */
    private static final int MARKER_PREFIX_MAX = 20;
    private static final String MARKER = " lease ";
    private static final int LEASE_ID_LENGTH = 36; // UUID.toString()
    /** How the restart guard's owner text starts. */
    static final String GUARD_OWNER = "the restart guard";

    private final AdvisoryLockManager manager;
    /** {@link #marker} before the lease id: printable ASCII only, as the server keeps it. */
    private final String markerPrefix;
    private final String holderQuery;

    AdvisoryHolders(AdvisoryLockManager manager, String idleName) {
        this.manager = manager;
        String name = idleName.length() > MARKER_PREFIX_MAX ? idleName.substring(0, MARKER_PREFIX_MAX) : idleName;
        this.markerPrefix = name.replaceAll("[^\\x20-\\x7e]", "?") + MARKER;
        holderQuery = "SELECT l.pid, a.key, a.owner, a.lease_id, a.token, a.acquired_at, a.ttl_ms, a.metadata,"
                + " a.pid AS row_pid, s.application_name,"
                // the session's last statement (a renewal) restarts its lease: NULL where the role may not see it
                + " greatest(a.acquired_at, s.state_change) AS renewed_at"
                + " FROM pg_locks l"
                + " LEFT JOIN " + manager.settings.table + " a ON a.id = ((l.classid::int8 << 32) | l.objid::int8)"
                + " LEFT JOIN pg_stat_activity s ON s.pid = l.pid"
                + " WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1"
                + " AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())";
    }

    /** The {@code application_name} of a session holding {@code leaseId}: a prefix of the configured name, then the lease. */
    String marker(String leaseId) {
        return markerPrefix + leaseId;
    }

    /** The lease a session's {@code application_name} names, or null (idle, or not a latchkey session). */
    static String markedLeaseId(String applicationName) {
        if (applicationName == null || applicationName.length() < MARKER.length() + LEASE_ID_LENGTH) return null;
        int at = applicationName.length() - LEASE_ID_LENGTH - MARKER.length();
        return applicationName.startsWith(MARKER, at) ? applicationName.substring(at + MARKER.length()) : null;
    }

    Optional<LockInfo> inspect(String key, long id) {
        String action = "inspecting '" + key + "'";
        Optional<LockInfo> held = holders(" AND ((l.classid::int8 << 32) | l.objid::int8) = ?", ps -> ps.setLong(1, id),
                action, key).stream().findFirst();
        return held.isPresent() ? held : guarded(" AND r.id = ?", ps -> ps.setLong(1, id), action).stream().findFirst();
    }

    List<LockInfo> list(String prefix) {
        Binder byPrefix = ps -> ps.setString(1, prefix);
        List<LockInfo> out = new ArrayList<>(holders(" AND starts_with(a.key, ?) ORDER BY a.key", byPrefix, "listing locks", null));
        Set<String> held = out.stream().map(LockInfo::key).collect(Collectors.toSet());
        guarded(" AND starts_with(r.key, ?)", byPrefix, "listing locks").stream().filter(g -> !held.contains(g.key())).forEach(out::add);
        out.sort(Comparator.comparing(LockInfo::key));
        return out;
    }

    /** Whether {@code info} is the restart guard's, not a holder's. */
    static boolean isGuard(LockInfo info) {
        return info.leaseId() == null && info.owner().startsWith(GUARD_OWNER);
    }

    /**
     * After an acquisition of {@code key} was refused: reports it busy, and a store wait when the
     * restart guard refused it. Returns who refused it (null: unknown, perhaps just released). A try
     * ({@code look} false) looks only inside a restart window, so that outside one a refusal costs no
     * round trip more; a failing look then only leaves the store wait unreported.
     */
    LockInfo refused(String key, long id, long calledNanos, boolean look) {
        manager.runtime.events().busy(key, calledNanos);
        if (!look && manager.sessions.window() == null) return null;
        LockInfo who;
        try {
            who = inspect(key, id).orElse(null);
        } catch (LockBackendException e) {
            if (look) throw e;
            return null;
        }
        if (who != null && isGuard(who)) manager.runtime.events().storeWait(key, AdvisorySessions.RESTART_GUARD, who.expiresAt());
        return who;
    }

    /**
     * The keys matching {@code condition} (on the table as {@code r}) that the restart guard keeps
     * busy now: none outside a restart window. Checks the session first, which is how a manager that
     * has not used the server since its start (a fresh {@code latchkey status}) learns of the window.
     */
    private List<LockInfo> guarded(String condition, Binder binder, String action) {
        return manager.pool.callSession(action, s -> {
            try {
                manager.sessions.ready(s);
            } catch (LockBackendException e) {
                if (e.isRetriable()) throw e;
                return List.of(); // a server or pooler this mode refuses: nothing is granted there, nothing guarded
            }
            AdvisorySessions.RestartWindow w = manager.sessions.window();
            if (w == null) return List.of();
            List<LockInfo> out = new ArrayList<>();
            try (PreparedStatement ps = s.connection.prepareStatement("SELECT r.key FROM " + manager.settings.table
                    + " r WHERE (r.acquired_at IS NULL OR r.acquired_at < to_timestamp(" + w.epoch() + "))" + condition)) {
                binder.bind(ps);
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) out.add(guard(rs.getString(1), w));
                }
            }
            return out;
        });
    }

    /** The restart guard as the holder of {@code key}: until the window's end, which {@code expiresAt} carries too. */
    private static LockInfo guard(String key, AdvisorySessions.RestartWindow w) {
        return new LockInfo(key, GUARD_OWNER + " until " + w.until() + " (PostgreSQL started at " + w.since()
                + "; a lease from before may still be valid)", null, 0, null, w.until(), null);
    }

    /**
     * Held advisory locks of this database matching {@code condition}, described from the table.
     * While a lease's row is still to be written by its manager (a {@code fencing=false} lease held
     * for less than {@link AdvisoryLockManager#RECORD_DELAY}), asks again, for up to the statement
     * timeout; after that such a lease is shown by its id and session alone.
     */
    private List<LockInfo> holders(String condition, Binder binder, String action, String forKey) {
        long deadline = System.nanoTime() + manager.settings.timeout.toNanos();
        Duration pause = AdvisoryLockManager.RECORD_DELAY.dividedBy(2);
        while (true) {
            List<LockInfo> out = new ArrayList<>();
            boolean unwritten = manager.pool.call(action, c -> describe(c, condition, binder, forKey, out));
            if (!unwritten || System.nanoTime() - deadline >= 0) return out;
            try {
                Thread.sleep(pause.toMillis());
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
                    Instant acquired = PgLockManager.instant(rs.getTimestamp("acquired_at"));
                    Instant renewed = PgLockManager.instant(rs.getTimestamp("renewed_at"));
                    long ttl = rs.getLong("ttl_ms");
                    out.add(new LockInfo(key, rs.getString("owner"), marked != null ? marked : rs.getString("lease_id"),
                            rs.getLong("token"), acquired, renewed == null ? null : renewed.plusMillis(ttl),
                            PgLockManager.metadataMap(rs.getArray("metadata"))));
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

    /**
     * Ends the session holding {@code key}'s lock id — if {@code leaseId} is given, only if that
     * session names the lease (whatever {@code ApplicationName} its manager was configured with).
     */
    boolean terminate(String key, long id, String leaseId) {
        return manager.pool.call("force-releasing '" + key + "'", c -> {
            // the two-argument form waits (up to 5 s) until the session is gone and its locks are free
            try (PreparedStatement ps = c.prepareStatement("SELECT l.pid, pg_terminate_backend(l.pid, 5000)"
                    + " FROM pg_locks l WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1"
                    + " AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())"
                    + " AND ((l.classid::int8 << 32) | l.objid::int8) = ?"
                    + (leaseId == null ? "" : " AND l.pid IN (SELECT pid FROM pg_stat_activity"
                            + " WHERE right(application_name, " + (MARKER.length() + LEASE_ID_LENGTH) + ") = ?)"))) {
                ps.setLong(1, id);
                if (leaseId != null) ps.setString(2, MARKER + leaseId);
                boolean broken = false;
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) broken |= rs.getBoolean(2);
                }
                return broken;
            } catch (SQLException e) {
                if ("42501".equals(e.getSQLState())) {
                    throw new LockBackendException("PostgreSQL at " + manager.settings.endpoint + ": not permitted to terminate"
                            + " the session holding '" + key + "' (" + e.getMessage() + "); forceRelease needs the holder's role,"
                            + " membership in it, or pg_signal_backend (a superuser's session only by a superuser)", false, e);
                }
                throw e;
            }
        });
    }

    /** Binds the parameters of a query condition. */
    @FunctionalInterface
    private interface Binder {
        void bind(PreparedStatement ps) throws SQLException;
    }
}
