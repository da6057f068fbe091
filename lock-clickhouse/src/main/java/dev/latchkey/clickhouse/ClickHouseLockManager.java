package dev.latchkey.clickhouse;

import dev.latchkey.Capability;
import dev.latchkey.Lease;
import dev.latchkey.LeaseOptions;
import dev.latchkey.LockBackendException;
import dev.latchkey.LockInfo;
import dev.latchkey.LockKeys;
import dev.latchkey.LockManager;
import dev.latchkey.LockTimeoutException;
import dev.latchkey.spi.LeaseRuntime;
import dev.latchkey.spi.LockContext;
import dev.latchkey.spi.TimeSource;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Locks in a ClickHouse table, which has no row lock and no unique constraint: an advisory
 * insert-then-verify protocol with a settle window (the design of the Meltano ClickHouse state
 * backend), made as safe as ClickHouse allows.
 *
 * <p><b>Protocol.</b> Every acquisition attempt inserts a candidate row with a fresh UUID
 * {@code lock_id}, in one statement that writes it only if the key has no live candidate. After the settle window the candidate reads <em>all</em> candidates of the key,
 * each collapsed only over its own versions ({@code argMax(…, revision)} per {@code lock_id}), and
 * wins if its row is the first live one in <em>commit order</em>: the block number ClickHouse gave
 * the candidate's insert ({@code _block_number}, kept through merges by
 * {@code enable_block_number_column}; heartbeat versions copy it into {@code seq}, so it never moves).
 * Losers withdraw their row with a tombstone. A row is live while it is not a tombstone and
 * {@code locked_at + ttl_ms} is after the server's {@code now64()}: staleness is judged by the
 * server's clock only. The server stamp {@code acquired_at} is kept, fixed, for people.
 *
 * <p><b>Guarantee.</b> On a single, non-replicated server (which numbers an insert and publishes
 * it under one lock, so a reader that sees a block sees every earlier block) at most one live
 * candidate is the winner of a key at any time, whatever the settle window; a holder that stops
 * renewing loses the key when its TTL passes on the server's clock, never earlier; and every
 * winner's fencing token is greater than every earlier winner's, as long as the server's clock does
 * not step back. With replicas, or a {@code Distributed} table, block numbers do not order inserts
 * across servers and only the settle window protects: an insert slower than it can let two
 * candidates win.
 *
 * <p><b>Requests whose outcome is unknown.</b> A request that timed out on the client may still
 * have landed on the server. A round that does not end in a lease — lost, or failed at the insert,
 * the settle read or the verdict — tombstones its candidate's {@code lock_id} whether or not the
 * insert is known to have landed (a tombstone of a row that never arrives is inert, and one that
 * arrives first still wins over the row by revision). A lost round does so at once; a failed one,
 * and a lost one whose tombstone failed, hand it to {@link CandidateWithdrawals}, which retries it
 * in the background until the candidate's TTL has passed since its insert was sent. So a candidate
 * whose reply was lost blocks the key only until the store answers again, not for its whole TTL
 * (unless the server executes the insert later than its TTL, or the manager is closed first).
 *
 * <p><b>Timeouts.</b> Each request waits at most {@code timeout} to connect, for a pooled
 * connection and for its reply (on the JDBC route, the wait for one of the data source's
 * connections is the data source's own: {@link JdbcStatements}); the client never retries, so an
 * outage surfaces after one timeout.
 * A lease's heartbeat waits at most {@code min(timeout, ttl/10)} for a pooled connection and for
 * the reply: a renewal that hangs ends a tenth of the TTL later, well inside the lease's TTL/5
 * safety margin, and leaves time for further attempts before its deadline. Its release waits
 * {@code timeout}, as every other request: a released lease has no deadline left to keep, so a
 * shorter bound would only turn a slow but answering server into a failed release.
 */
final class ClickHouseLockManager implements LockManager {
    /** The revision of tombstones: above any heartbeat, so nothing revives a withdrawn row. */
    private static final String TOMBSTONE_REVISION = "18446744073709551615";
    private static final String COLUMNS = "(state_id, lock_id, revision, seq, acquired_at, locked_at, ttl_ms, released, token, owner, metadata)";
    private static final Pattern TABLE_TTL = Pattern.compile("TTL\\s+locked_at\\s*\\+\\s*toIntervalSecond\\((\\d+)\\)");
    /** One row of the lock table collapsed to its newest version, as the server saw it at {@code nowMicros}. */
    record Candidate(String key, String lockId, long seq, long acquiredMicros, long lockedMicros, long ttlMs,
                     long token, String owner, String metadata, boolean live, long nowMicros) {
        /** Commit order of the candidates' first inserts; lock_id only separates rows planted in one block. */
        static final Comparator<Candidate> ORDER = Comparator.comparingLong(Candidate::seq)
                .thenComparing(Candidate::lockId);

        boolean before(Candidate other) {
            return ORDER.compare(this, other) < 0;
        }

        LockInfo info() {
            return new LockInfo(key, owner, lockId, token, micros(acquiredMicros), micros(lockedMicros + ttlMs * 1000),
                    MetadataText.decode(metadata));
        }
    }

    /** What a round returns when a live candidate kept it from inserting (the holder was not read). */
    private static final Object BUSY = new Object();

    private final ClickHouseSettings settings;
    private final TimeSource time;
    final LeaseRuntime runtime;
    private final ClickHouseStatements sql;
    private final CandidateWithdrawals withdrawals;
    private final String table;
    private final long staleSeconds;
    /** The hot paths' statement texts, built once: only their bound parameters change. */
    private final String readCandidatesSql;
    private final String insertCandidateSql;
    private final String heartbeatSql;
    private final String tombstoneSql;
    private final String releaseSql;
    private final String deleteStaleSql;
    private final ClickHouseStatements.Limits deleteStaleLimits;

    /**
     * @param sql the route every statement goes through (client-v2 or JDBC); {@link #close} closes
     *            it, which closes only what the route itself built
     */
    ClickHouseLockManager(ClickHouseSettings settings, ClickHouseStatements sql, LockContext context) {
        this.settings = settings;
        this.time = context.time();
        this.runtime = LeaseRuntime.create(context, "clickhouse");
        this.table = settings.qualifiedTable();
        this.sql = sql;
        this.withdrawals = new CandidateWithdrawals(runtime, this::tombstone);
        this.readCandidatesSql = collapsed("state_id = {key:String}");
        // The token is fixed at insert: above every token ever recorded for the key (every version of
        // a candidate carries its token, so the newest versions' max is the rows' max), and never
        // below the server's clock in microseconds, so it keeps rising after the TTL removed all rows.
        this.insertCandidateSql = "INSERT INTO " + table + " " + COLUMNS + " SELECT {key:String}, {id:String}, 1, 0, "
                + "now64(6), now64(6), {ttl:Int64}, 0, greatest(k.top + 1, toUnixTimestamp64Micro(now64(6))), {own:String}, {meta:String} "
                + "FROM (SELECT max(tok) AS top, countIf(live) AS holders FROM (" + readCandidatesSql + ")) AS k "
                + "WHERE k.holders = 0";
        this.heartbeatSql = "INSERT INTO " + table + " " + COLUMNS + " SELECT {key:String}, {id:String}, "
                + "{rev:UInt64}, {seq:UInt64}, fromUnixTimestamp64Micro({acq:Int64}), now64(6), {ttl:Int64}, 0, {tok:Int64}, {own:String}, "
                + "{meta:String} WHERE (SELECT (lid, lat + ttl * 900 > now) FROM (" + readCandidatesSql
                + ") WHERE live ORDER BY ord, lid LIMIT 1) = ({id:String}, 1)";
        this.tombstoneSql = "INSERT INTO " + table + " " + COLUMNS + " SELECT {key:String}, {id:String}, " + TOMBSTONE_REVISION
                + ", {seq:UInt64}, fromUnixTimestamp64Micro({acq:Int64}), now64(6), {ttl:Int64}, 1, {tok:Int64}, {own:String}, {meta:String}";
        // the key's live winner, a scalar subquery (empty when none), must still be this row
        this.releaseSql = tombstoneSql + " WHERE (SELECT lid FROM (" + readCandidatesSql + ") WHERE live ORDER BY ord, lid LIMIT 1)"
                + " = {id:String}";
        this.deleteStaleSql = "DELETE FROM " + table + " WHERE state_id = {key:String} "
                + "AND locked_at < now64(6) - INTERVAL {stale:UInt32} SECOND";
        this.deleteStaleLimits = sql.waitingAtMost(settings.timeout(), Map.of("lightweight_deletes_sync", "2"));
        try {
            this.staleSeconds = ensureTable();
        } catch (RuntimeException e) {
            sql.close();
            throw e;
        }
    }

    /** Creates database and table if absent; returns the stale threshold the table really has. */
    private long ensureTable() {
        long stale = settings.stale().toSeconds();
        sql.execute("create database", "CREATE DATABASE IF NOT EXISTS `" + settings.database() + "`", Map.of());
        // ORDER BY (state_id, lock_id): candidates of one key never share a sorting key, so neither
        // FINAL nor a background merge can collapse them; only versions of one candidate collapse.
        sql.execute("create lock table", "CREATE TABLE IF NOT EXISTS " + table + " ("
                + "state_id String, "
                + "lock_id String, "
                + "revision UInt64 DEFAULT 1, "
                + "seq UInt64 DEFAULT 0, "
                + "locked_at DateTime64(6) DEFAULT now64(6), "
                + "acquired_at DateTime64(6) DEFAULT locked_at, "
                + "ttl_ms Int64 DEFAULT " + stale * 1000 + ", "
                + "released UInt8 DEFAULT 0, "
                + "token Int64 DEFAULT 0, "
                + "owner String DEFAULT '', "
                + "metadata String DEFAULT ''"
                + ") ENGINE = ReplacingMergeTree(revision) ORDER BY (state_id, lock_id) "
                + "TTL locked_at + INTERVAL " + stale + " SECOND "
                // Keeps each row's _block_number (its insert's commit order) through merges.
                + "SETTINGS enable_block_number_column = 1", Map.of());
        List<String> rows = sql.query("read lock table schema",
                "SELECT create_table_query AS q FROM system.tables WHERE database = {db:String} AND name = {t:String}",
                Map.of("db", settings.database(), "t", settings.table()), r -> r.string("q"));
        String ddl = rows.isEmpty() ? "" : rows.get(0);
        Matcher ttl = TABLE_TTL.matcher(ddl);
        if (!ddl.contains("ReplacingMergeTree(revision)") || !ddl.contains("ORDER BY (state_id, lock_id)")
                || !ddl.contains("enable_block_number_column = 1") || !ttl.find()) {
            throw new LockBackendException("ClickHouse at " + settings.endpoint() + ": the table exists with another schema"
                    + " (this backend needs ReplacingMergeTree(revision) ORDER BY (state_id, lock_id), a TTL on locked_at"
                    + " and enable_block_number_column = 1;"
                    + " a table ORDER BY state_id alone lets merges collapse competing candidates); choose another table=",
                    false);
        }
        return Long.parseLong(ttl.group(1));
    }

    @Override
    public Optional<Lease> tryAcquire(String key, LeaseOptions options) {
        LockKeys.validate(key);
        check(options);
        long called = time.nanoTime();
        if (attempt(key, options) instanceof Lease lease) return Optional.of(lease);
        runtime.events().busy(key, called);
        return Optional.empty();
    }

    @Override
    public Lease acquire(String key, Duration maxWait, LeaseOptions options) {
        LockKeys.validate(key);
        check(options);
        Objects.requireNonNull(maxWait, "maxWait");
        long called = time.nanoTime();
        long deadline = called + maxWait.toNanos();
        while (true) {
            Object result = attempt(key, options);
            if (result instanceof Lease lease) return lease;
            long remaining = deadline - time.nanoTime();
            if (remaining <= 0) {
                runtime.events().busy(key, called);
                throw new LockTimeoutException(key, maxWait, holderForMessage(key, result));
            }
            // Polling is cheap (one INSERT … SELECT that writes nothing while the key is held);
            // jitter keeps racing waiters from inserting in lockstep.
            long pause = TimeUnit.MILLISECONDS.toNanos(ThreadLocalRandom.current().nextLong(20, 80));
            sleep(Math.min(pause, remaining));
        }
    }

    /**
     * The holder to name in a timeout: the candidate that out-ranked the last round, else the key's
     * live winner read now (a busy round inserts nothing and reads nothing); none if that read fails.
     */
    private LockInfo holderForMessage(String key, Object lastRound) {
        if (lastRound instanceof Candidate holder) return holder.info();
        try {
            return inspect(key).orElse(null);
        } catch (LockBackendException e) {
            return null; // the timeout is the caller's answer; the store's trouble shows in its next call
        }
    }

    private void check(LeaseOptions options) {
        Objects.requireNonNull(options, "options");
        checkTtl(options.ttl());
    }

    /** A lease's TTL, taken with or renewed by ({@link Lease#renew(Duration)}), within the table's bounds. */
    void checkTtl(Duration ttl) {
        if (ttl.compareTo(Duration.ofSeconds(staleSeconds)) > 0) {
            throw new IllegalArgumentException("lease ttl " + ttl + " exceeds the lock table's stale threshold of "
                    + staleSeconds + "s (its TTL would delete a live lock); raise stale= in the URI for a new table");
        }
        if (ttl.compareTo(settings.settle().multipliedBy(2)) <= 0) {
            throw new IllegalArgumentException("lease ttl " + ttl + " must be more than twice the settle window ("
                    + settings.settle() + "): the settle wait is spent out of the lease's time");
        }
    }

    /**
     * One round of the protocol: returns the won {@link Lease}, the {@link Candidate} that out-ranked
     * us, {@link #BUSY} when a live candidate kept us from inserting, or {@code null} when this
     * round's candidate lost without a live winner left to name.
     */
    private Object attempt(String key, LeaseOptions options) {
        String lockId = UUID.randomUUID().toString();
        String metadata = MetadataText.encode(options.metadata());
        // what a tombstone needs when the candidate could not be read back
        Candidate mine = new Candidate(key, lockId, 0, 0, 0, options.ttl().toMillis(), 0, options.owner(), metadata, false, 0);
        long sent = time.nanoTime();
        Lease lease = null;
        boolean failed = true;
        boolean written = true; // until the server says it wrote nothing, the candidate may have landed
        try {
            if (!insertCandidateIfFree(key, lockId, options, metadata)) {
                written = false;
                return BUSY;
            }
            sleep(settings.settle().toNanos());
            List<Candidate> rows = candidates(key);
            for (Candidate r : rows) {
                if (r.lockId().equals(lockId)) mine = r;
            }
            long staleMicros = staleSeconds * 1_000_000;
            if (rows.stream().anyMatch(r -> r.lockedMicros() < r.nowMicros() - staleMicros)) {
                // Remains of a crashed holder that the TTL merge has not reaped yet: remove them now,
                // synchronously (the seed's active clean-up). Such rows are past every lease's TTL, so
                // they never were live: the verdict below, on the rows read before, stays the same.
                deleteStale(key);
            }
            Candidate me = mine;
            // Win only as the earliest live candidate whose token is above the token of every row
            // ranked before it (live or not): two candidates may have computed the same max(token)+1,
            // and the later one must not win after the earlier one released.
            boolean won = me.live() && winner(rows).map(w -> w.lockId().equals(lockId)).orElse(false)
                    && rows.stream().noneMatch(r -> r != me && r.before(me) && r.token() >= me.token());
            if (won) {
                lease = new ClickHouseLease(this, me, options, sent); // refuses (and releases) a lease late on arrival
                return lease;
            }
            failed = false;
            return winner(rows).filter(w -> !w.lockId().equals(lockId)).orElse(null);
        } finally {
            if (lease == null && written) withdraw(mine, sent + options.ttl().toNanos(), failed);
        }
    }

    /** The earliest live candidate: the holder. */
    private static Optional<Candidate> winner(List<Candidate> rows) {
        return rows.stream().filter(Candidate::live).min(Candidate.ORDER);
    }

    // ---- SQL ------------------------------------------------------------------------------------

    /**
     * Rows collapsed to their newest version per {@code (state_id, lock_id)} — never across lock_ids,
     * which would merge competing candidates — with liveness judged by the server's clock.
     */
    private String collapsed(String where) {
        return "SELECT state_id AS sid, lock_id AS lid, "
                + "min(if(seq = 0, _block_number, seq)) AS ord, "
                + "toUnixTimestamp64Micro(argMax(acquired_at, revision)) AS acq, "
                + "toUnixTimestamp64Micro(argMax(locked_at, revision)) AS lat, "
                + "argMax(ttl_ms, revision) AS ttl, argMax(released, revision) AS rel, argMax(token, revision) AS tok, "
                + "argMax(owner, revision) AS own, argMax(metadata, revision) AS meta, "
                + "toUnixTimestamp64Micro(now64(6)) AS now, (rel = 0 AND lat + ttl * 1000 > now) AS live "
                + "FROM " + table + " WHERE " + where + " GROUP BY state_id, lock_id";
    }

    List<Candidate> candidates(String key) {
        return sql.query("read lock rows", readCandidatesSql, Map.of("key", key), ClickHouseLockManager::candidate);
    }

    /**
     * Inserts this round's candidate only if the key has no live candidate, in one statement: the
     * check and the insert that the protocol used to send as a read and an insert, with the same
     * race (a contender may insert in between, which the verify read after the settle window
     * decides, as before). Returns false when nothing was written (the key is held).
     */
    private boolean insertCandidateIfFree(String key, String lockId, LeaseOptions options, String metadata) {
        long written = sql.execute("insert candidate", insertCandidateSql, Map.of("key", key, "id", lockId, "ttl", options.ttl().toMillis(), "own", options.owner(), "meta", metadata));
        return written > 0;
    }

    /**
     * New version of a held row, written only if it is still the key's live winner with at least a
     * tenth of its TTL left on the server's clock. That margin bounds the one gap of a conditional
     * insert: it is checked when the statement starts, and takes effect when the insert commits; a
     * contender that saw the row expired in between could win while the heartbeat revives it.
     */
    boolean heartbeat(Candidate row, long revision, Duration ttl, ClickHouseStatements.Limits limits) {
        Map<String, Object> params = rowParams(row);
        params.put("rev", revision);
        params.put("ttl", ttl.toMillis());
        return sql.execute("heartbeat", heartbeatSql, params, limits) > 0;
    }

    /**
     * The limits of a lease's heartbeat for a TTL: a reply waited for at most
     * {@code min(timeout, ttl/10)}. The lease builds them once per TTL.
     */
    ClickHouseStatements.Limits heartbeatLimits(Duration ttl) {
        return sql.waitingAtMost(ttl.dividedBy(10), Map.of());
    }

    /**
     * Tombstones a held row; false (after tombstoning it anyway) if it was no longer the live winner.
     * Each statement waits up to {@code timeout}, not a tenth of the TTL: nothing waits on a released lease.
     */
    boolean releaseHeld(Candidate row) {
        if (sql.execute("release", releaseSql, rowParams(row)) > 0) return true;
        sql.execute("release", tombstoneSql, rowParams(row));
        return false;
    }

    private Map<String, Object> rowParams(Candidate row) {
        Map<String, Object> p = new HashMap<>();
        p.put("key", row.key());
        p.put("id", row.lockId());
        p.put("seq", row.seq());
        p.put("acq", row.acquiredMicros());
        p.put("ttl", row.ttlMs());
        p.put("tok", row.token());
        p.put("own", row.owner());
        p.put("meta", row.metadata());
        return p;
    }

    /**
     * Takes out a candidate of a round that did not end in a lease, with a tombstone (one insert)
     * rather than a {@code DELETE} (a mutation, 10–200 ms): readers honour the tombstone at once,
     * merges collapse it later, and the row keeps its token for the fencing order. A lost round
     * tombstones at once; a round that failed (the store is not answering: the caller should not
     * wait another timeout), and a tombstone that fails, go to the background until {@code untilNanos}.
     */
    private void withdraw(Candidate row, long untilNanos, boolean failed) {
        if (!failed) {
            try {
                tombstone(row);
                return;
            } catch (LockBackendException e) {
                // retried in the background
            }
        }
        withdrawals.add(row, untilNanos);
    }

    private void tombstone(Candidate row) {
        sql.execute("withdraw candidate", tombstoneSql, rowParams(row));
    }

    private void deleteStale(String key) {
        sql.execute("delete stale rows", deleteStaleSql, Map.of("key", key, "stale", staleSeconds), deleteStaleLimits);
    }

    @Override
    public Optional<LockInfo> inspect(String key) {
        LockKeys.validate(key);
        return winner(candidates(key)).map(Candidate::info);
    }

    @Override
    public List<LockInfo> list(String prefix) {
        Objects.requireNonNull(prefix, "prefix");
        List<Candidate> rows = sql.query("list locks", "SELECT * FROM (" + collapsed("startsWith(state_id, {p:String})")
                + ") WHERE live ORDER BY sid, ord, lid LIMIT 1 BY sid", Map.of("p", prefix), ClickHouseLockManager::candidate);
        List<LockInfo> out = new ArrayList<>(rows.size());
        for (Candidate c : rows) out.add(c.info());
        return out;
    }

    @Override
    public boolean forceRelease(String key) {
        LockKeys.validate(key);
        // Tombstones every live candidate of the key (a contender mid-settle simply loses its round).
        return tombstoneLive(key, "", Map.of("key", key));
    }

    @Override
    public boolean forceRelease(String key, String leaseId) {
        LockKeys.validate(key);
        Objects.requireNonNull(leaseId, "leaseId");
        return tombstoneLive(key, " AND lid = {id:String}", Map.of("key", key, "id", leaseId));
    }

    private boolean tombstoneLive(String key, String condition, Map<String, Object> params) {
        long written = sql.execute("force release", "INSERT INTO " + table + " " + COLUMNS + " SELECT sid, lid, "
                + TOMBSTONE_REVISION + ", ord, fromUnixTimestamp64Micro(acq), now64(6), ttl, 1, tok, own, meta FROM ("
                + readCandidatesSql + ") WHERE live" + condition, params);
        return written > 0;
    }

    @Override
    public Set<Capability> capabilities() {
        return EnumSet.of(Capability.SERVER_SIDE_EXPIRY, Capability.LIST, Capability.FENCING_TOKENS);
    }

    @Override
    public String description() {
        return settings.masked();
    }

    /** Closes the client if it built it (never the application's client or data source); candidates still waiting to be withdrawn are dropped and end at their TTL. */
    @Override
    public void close() {
        withdrawals.close();
        sql.close();
    }

    // ---- plumbing -------------------------------------------------------------------------------

    /** The reader's current row of a {@link #collapsed} read. */
    private static Candidate candidate(ClickHouseStatements.Row r) {
        return new Candidate(r.string("sid"), r.string("lid"), r.number("ord"), r.number("acq"), r.number("lat"),
                r.number("ttl"), r.number("tok"), r.string("own"), r.string("meta"),
                r.number("live") != 0, r.number("now"));
    }

    private void sleep(long nanos) {
        try {
            TimeUnit.NANOSECONDS.sleep(nanos);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new LockBackendException("interrupted while waiting for lock at ClickHouse " + settings.endpoint(), false, e);
        }
    }

    private static Instant micros(long micros) {
        return Instant.EPOCH.plus(micros, ChronoUnit.MICROS);
    }
}
