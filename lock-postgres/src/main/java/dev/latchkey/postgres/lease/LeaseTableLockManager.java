package dev.latchkey.postgres.lease;

import dev.latchkey.Capability;
import dev.latchkey.Lease;
import dev.latchkey.LeaseLostException;
import dev.latchkey.LeaseLostException.Reason;
import dev.latchkey.LeaseOptions;
import dev.latchkey.LockBackendException;
import dev.latchkey.LockInfo;
import dev.latchkey.LockTimeoutException;
import dev.latchkey.postgres.shared.PgErrors;
import dev.latchkey.postgres.shared.PgLockManager;
import dev.latchkey.postgres.shared.PgPool;
import dev.latchkey.postgres.shared.PgSession;
import dev.latchkey.postgres.shared.PgSettings;
import dev.latchkey.spi.LockContext;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

/**
 * {@code mode=lease}: one row per key in a lock table, expiring by the server's clock.
 *
 * <p><b>Guarantee.</b> Acquire is one statement: insert the row, or take over a row that is
 * released or whose {@code expires_at} has passed by the server's {@code clock_timestamp()}; the
 * row lock of {@code INSERT … ON CONFLICT DO UPDATE} makes concurrent takeovers of one key
 * serialise, so exactly one wins. Renew and release are conditional on the lease id, so a lease
 * that was taken over or broken gets {@link LeaseLostException} and never touches the new holder.
 * The renewals of all the leases a manager holds share one statement per heartbeat tick
 * ({@link LeaseRenewals}), with the same conditions and the same outcome per lease.
 * The token is a per-key counter in the row, bumped by each acquisition in the same commit and
 * kept on release. No connection is held between calls: this works behind transaction-pooling
 * proxies, and held leases cost no connections. Waiters are woken by {@code NOTIFY} on release
 * and poll as a fallback (and for expiries, which send no notification).
 *
 * <p><b>Requests whose reply was lost.</b> An acquisition whose outcome is unknown (the connection
 * failed or timed out before the reply) may have landed: its lease id, which nobody holds, would
 * keep the key for a TTL. It is withdrawn in the background — a release conditional on that lease
 * id, on another connection, retried with back-off for up to a TTL — so it can only ever remove
 * that phantom, never a real holder. A renewal whose outcome is unknown extends nothing locally
 * ({@link TableLease}); if the lease then runs out, the same withdrawal removes what such a
 * renewal may have added to the row, once the TTL of the last renewal known to have landed is up.
 * (A statement still running on the server when its client has gone ends within a second, see
 * {@link PgPool}, so a phantom usually does not land at all.)
 *
 * <p><b>Model.</b> {@code model/pg-lease.pml} is a spin model of this protocol and of
 * {@link TableLease} and {@link LeaseRenewals} (the statements by the server's clock, one renewal
 * statement carrying several leases, durable and asynchronous commits,
 * server crashes, lost and late replies, withdrawals), checked by {@code scripts/model-check.sh};
 * {@code docs/model-checking.md} says what it proves for which bounds. A change to the protocol
 * here belongs in the model too.
 */
public final class LeaseTableLockManager extends PgLockManager<PgSession> {
    private static final Set<Capability> CAPABILITIES = Set.copyOf(EnumSet.of(
            Capability.FENCING_TOKENS, Capability.SERVER_SIDE_EXPIRY, Capability.LIST, Capability.NATIVE_WAIT));
    private static final String MS = "?::float8 * interval '1 millisecond'";
    /** The first retry of a withdrawal; each further one waits four times as long. */
    private static final Duration FIRST_WITHDRAW_RETRY = Duration.ofMillis(100);

    private final ReleaseListener listener;
    /** Renews every due lease of this manager in one statement per heartbeat tick. */
    final LeaseRenewals renewals;
    private final String acquireSql;
    private final String holderSql;
    private final String releaseSql;
    private final String breakSql;
    private final String breakLeaseSql;
    private final String currentLeaseSql;
    private final String selectLive;

    public LeaseTableLockManager(PgSettings settings, LockContext context) {
        super(settings, context, PgSession::new);
        this.listener = new ReleaseListener(pool, settings.channel(), runtime.threads("pg-listen"));
        String t = settings.table;
        // one statement, no more: the holder of a busy key is looked up only by a caller that waits
        acquireSql = "INSERT INTO " + t + " AS l (key, lease_id, owner, token, acquired_at, expires_at, metadata)"
                + " VALUES (?, ?, ?, 1, clock_timestamp(), clock_timestamp() + " + MS + ", ?)"
                + " ON CONFLICT (key) DO UPDATE SET lease_id = excluded.lease_id, owner = excluded.owner,"
                + "  token = l.token + 1, acquired_at = excluded.acquired_at, expires_at = excluded.expires_at,"
                + "  metadata = excluded.metadata"
                + " WHERE l.lease_id IS NULL OR l.expires_at <= clock_timestamp()"
                + " RETURNING token";
        // for the timeout message and the next poll (at the holder's expiry)
        holderSql = "SELECT token, owner, lease_id, acquired_at, expires_at, metadata,"
                + " extract(epoch FROM expires_at - clock_timestamp()) * 1000"
                + " FROM " + t + " WHERE key = ? AND lease_id IS NOT NULL";
        renewals = new LeaseRenewals(this, t);
        String notify = " SELECT pg_notify('" + settings.channel() + "', key)";
        // A release need not wait for the disk: a crash that loses it leaves the row held until its
        // expiry (as for a holder that crashed), and the next acquisition's durable commit flushes it
        // first. Renewals and force releases stay durable: losing those would shorten or undo them.
        releaseSql = "WITH r AS (UPDATE " + t + " SET lease_id = NULL, expires_at = clock_timestamp()"
                + " WHERE key = ? AND lease_id = ? RETURNING key)" + notify
                + ", set_config('synchronous_commit', 'off', true) FROM r";
        String breakHeld = "WITH r AS (UPDATE " + t + " SET lease_id = NULL, expires_at = clock_timestamp()"
                + " WHERE key = ? AND lease_id IS NOT NULL AND expires_at > clock_timestamp()";
        breakSql = breakHeld + " RETURNING key)" + notify + " FROM r";
        breakLeaseSql = breakHeld + " AND lease_id = ? RETURNING key)" + notify + " FROM r";
        currentLeaseSql = "SELECT " + ROW_NOW + " FROM " + t + " l WHERE l.key = ?";
        selectLive = "SELECT key, owner, lease_id, token, acquired_at, expires_at, metadata FROM " + t
                + " WHERE lease_id IS NOT NULL AND expires_at > clock_timestamp()";
    }

    /** The outcome of one acquisition attempt: a lease, or the holder seen and its remaining time. */
    private static final class Attempt {
        Lease lease;
        LockInfo holder;
        long holderRemainingMillis = -1;
    }

    @Override
    public Optional<Lease> tryAcquire(String key, LeaseOptions options) {
        long called = context.time().nanoTime();
        Lease lease = attempt(prepare(key), options, false).lease;
        if (lease == null) runtime.events().busy(key, called);
        return Optional.ofNullable(lease);
    }

    @Override
    public Lease acquire(String key, Duration maxWait, LeaseOptions options) {
        prepare(key);
        long called = context.time().nanoTime();
        long deadline = called + Math.max(0, maxWait.toNanos());
        boolean waits = maxWait.toMillis() > 0;
        try {
            if (waits) listener.register(key, settings.timeout.toMillis());
            while (true) {
                long version = waits ? listener.version(key) : 0; // read before the attempt: no lost wake-up
                Attempt a = attempt(key, options, true);
                if (a.lease != null) return a.lease;
                long left = deadline - context.time().nanoTime();
                if (left <= 0) {
                    runtime.events().busy(key, called);
                    throw new LockTimeoutException(key, maxWait, a.holder);
                }
                if (a.holder == null) continue; // released (or expired) since the attempt: try again now
                long wait = Math.min(TimeUnit.NANOSECONDS.toMillis(left) + 1, settings.poll.toMillis());
                wait = Math.min(wait, a.holderRemainingMillis + 1);
                listener.await(key, version, Math.max(1, wait));
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new LockBackendException("interrupted while waiting for '" + key + "' at " + settings.endpoint, false, e);
        } finally {
            if (waits) listener.unregister(key);
        }
    }

    /**
     * One acquisition statement; if the key is busy and {@code holder}, a second one (same
     * connection) reads the holder and its remaining time.
     */
    private Attempt attempt(String key, LeaseOptions options, boolean holder) {
        String leaseId = UUID.randomUUID().toString();
        long sent = context.time().nanoTime();
        boolean[] answered = {false};
        try {
            return pool.call("acquiring '" + key + "'", c -> {
                Attempt a = new Attempt();
                try (PreparedStatement ps = c.prepareStatement(acquireSql)) {
                    ps.setString(1, key);
                    ps.setString(2, leaseId);
                    ps.setString(3, options.owner());
                    ps.setLong(4, options.ttl().toMillis());
                    ps.setArray(5, metadataArray(c, options.metadata()));
                    try (ResultSet rs = ps.executeQuery()) {
                        answered[0] = true;
                        if (rs.next()) {
                            a.lease = new TableLease(this, key, leaseId, rs.getLong(1), options, sent);
                            return a;
                        }
                    }
                }
                if (!holder) return a;
                try (PreparedStatement ps = c.prepareStatement(holderSql)) {
                    ps.setString(1, key);
                    try (ResultSet rs = ps.executeQuery()) {
                        if (!rs.next()) return a;
                        a.holder = new LockInfo(key, rs.getString(2), rs.getString(3), rs.getLong(1),
                                instant(rs.getTimestamp(4)), instant(rs.getTimestamp(5)), metadataMap(rs.getArray(6)));
                        a.holderRemainingMillis = Math.max(0, (long) Math.ceil(rs.getDouble(7)));
                    }
                }
                return a;
            });
        } catch (LockBackendException e) {
            if (!answered[0] && e.getCause() instanceof SQLException cause && PgErrors.outcomeUnknown(cause)) {
                long now = context.time().nanoTime();
                withdrawLater(key, leaseId, now, now + options.ttl().toNanos());
            }
            throw e;
        }
    }

    /**
     * Withdraws {@code leaseId} from {@code key}'s row in the background, from {@code atNanos} on,
     * retrying with back-off until {@code untilNanos} (by when a write that may still land has expired
     * by itself). Conditional on the lease id: it never touches another holder.
     */
    void withdrawLater(String key, String leaseId, long atNanos, long untilNanos) {
        runtime.later(Duration.ofNanos(Math.max(0, atNanos - context.time().nanoTime())),
                () -> withdraw(key, leaseId, untilNanos, FIRST_WITHDRAW_RETRY.toNanos()));
    }

    private void withdraw(String key, String leaseId, long untilNanos, long retryNanos) {
        try {
            if (releaseRow(key, leaseId)) return;
        } catch (LockBackendException e) {
            // the server is still out of reach: try again
        }
        if (context.time().nanoTime() + retryNanos - untilNanos > 0) return;
        runtime.later(Duration.ofNanos(retryNanos), () -> withdraw(key, leaseId, untilNanos, retryNanos * 4));
    }

    void release(TableLease lease) {
        if (!releaseRow(lease.key(), lease.leaseId())) throw lost(lease, "release");
    }

    /** Releases {@code key}'s row if it carries {@code leaseId} (and wakes the waiters); false if it does not. */
    private boolean releaseRow(String key, String leaseId) {
        return pool.call("releasing the lease on '" + key + "'", c -> {
            try (PreparedStatement ps = c.prepareStatement(releaseSql)) {
                ps.setString(1, key);
                ps.setString(2, leaseId);
                try (ResultSet rs = ps.executeQuery()) {
                    return rs.next();
                }
            }
        });
    }

    /** Why the row no longer carries the lease's id, read from the row now. */
    private LeaseLostException lost(TableLease lease, String what) {
        RowNow now = pool.call("reading the lock row of '" + lease.key() + "'", c -> {
            try (PreparedStatement ps = c.prepareStatement(currentLeaseSql)) {
                ps.setString(1, lease.key());
                try (ResultSet rs = ps.executeQuery()) {
                    return rs.next() ? RowNow.read(rs, 1) : null;
                }
            }
        });
        return lost(lease, what, now);
    }

    /** The columns of {@link RowNow} from a lock row {@code l} (NULLs where the row is missing). */
    static final String ROW_NOW = "coalesce(l.lease_id, ''), l.token";

    /** What a lock row carries now: the lease id ({@code ""} when released or broken) and the key's token. */
    record RowNow(String leaseId, long token) {
        /** The {@link #ROW_NOW} columns at {@code column}; null when the row is gone. */
        static RowNow read(ResultSet rs, int column) throws SQLException {
            String leaseId = rs.getString(column);
            long token = rs.getLong(column + 1);
            return rs.wasNull() ? null : new RowNow(leaseId, token);
        }
    }

    /**
     * Why the row no longer carries the lease's id, given what it carries {@code now} (null: the row
     * is gone). Every acquisition raises the key's token and a force release keeps it, so the token
     * tells a lease that was broken (still its token, no lease id) from one whose row was taken over —
     * after it had expired on the server's clock, or after a break — even once that next holder has
     * released in turn (which used to read as "force-released").
     */
    static LeaseLostException lost(TableLease lease, String what, RowNow now) {
        Reason reason;
        String why;
        if (now == null) {
            reason = Reason.GONE;
            why = "the lock row is gone";
        } else if (now.token() == lease.fencingToken() && now.leaseId().isEmpty()) {
            reason = Reason.BROKEN;
            why = "it was force-released";
        } else {
            reason = Reason.TAKEN_OVER;
            why = "another lease (token " + now.token() + ") took the key after this lease's row had expired on the"
                    + " server's clock (or had been force-released)" + (now.leaseId().isEmpty() ? "; it has released it since" : "");
        }
        return new LeaseLostException(reason, "cannot " + what + " lease on '" + lease.key() + "' (token "
                + lease.fencingToken() + "): " + why);
    }

    @Override
    public Optional<LockInfo> inspect(String key) {
        prepare(key);
        List<LockInfo> found = query(selectLive + " AND key = ?", key, "inspecting '" + key + "'");
        return found.stream().findFirst();
    }

    @Override
    public List<LockInfo> list(String prefix) {
        prepare();
        return query(selectLive + " AND starts_with(key, ?) ORDER BY key", prefix, "listing locks");
    }

    private List<LockInfo> query(String sql, String param, String action) {
        return pool.call(action, c -> {
            List<LockInfo> out = new ArrayList<>();
            try (PreparedStatement ps = c.prepareStatement(sql)) {
                ps.setString(1, param);
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        out.add(new LockInfo(rs.getString(1), rs.getString(2), rs.getString(3), rs.getLong(4),
                                instant(rs.getTimestamp(5)), instant(rs.getTimestamp(6)), metadataMap(rs.getArray(7))));
                    }
                }
            }
            return out;
        });
    }

    @Override
    public boolean forceRelease(String key) {
        return breakLock(key, null);
    }

    @Override
    public boolean forceRelease(String key, String leaseId) {
        return breakLock(key, java.util.Objects.requireNonNull(leaseId, "leaseId"));
    }

    private boolean breakLock(String key, String leaseId) {
        prepare(key);
        return pool.call("force-releasing '" + key + "'", c -> {
            try (PreparedStatement ps = c.prepareStatement(leaseId == null ? breakSql : breakLeaseSql)) {
                ps.setString(1, key);
                if (leaseId != null) ps.setString(2, leaseId);
                try (ResultSet rs = ps.executeQuery()) {
                    return rs.next();
                }
            }
        });
    }

    @Override
    public Set<Capability> capabilities() {
        return CAPABILITIES;
    }

    @Override
    public void close() {
        super.close();
        listener.close();
    }
}
