package dev.latchkey.postgres;

import dev.latchkey.Latchkey;
import dev.latchkey.Lease;
import dev.latchkey.LeaseOptions;
import dev.latchkey.LockManager;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Arrays;
import java.util.Locale;

/**
 * A small latency comparison, not a test: latchkey's acquire+release against the raw floors on
 * one connection. {@code java -cp … dev.latchkey.postgres.AdvisoryBench postgres://… [iterations]}.
 * Prints p50/p90/p99 in microseconds per lock+unlock.
 */
public final class AdvisoryBench {
    private AdvisoryBench() {}

    @FunctionalInterface
    private interface Op {
        void run() throws Exception;
    }

    public static void main(String[] args) throws Exception {
        String uri = args[0];
        int n = args.length > 1 ? Integer.parseInt(args[1]) : 3000;
        long id = 0x4c4b42656e6368L;
        LeaseOptions quiet = LeaseOptions.ttl(Duration.ofSeconds(60)).withoutHeartbeat();
        try (Connection c = PgTestSupport.jdbc(uri);
             LockManager advisory = Latchkey.open(uri);
             LockManager noFencing = Latchkey.open(uri + (uri.contains("?") ? "&" : "?") + "fencing=false");
             LockManager lease = Latchkey.open(uri + (uri.contains("?") ? "&" : "?") + "mode=lease")) {
            try (Statement st = c.createStatement()) {
                st.execute("CREATE TABLE IF NOT EXISTS latchkey_bench (id int PRIMARY KEY, v bigint)");
                st.execute("INSERT INTO latchkey_bench VALUES (1, 0) ON CONFLICT DO NOTHING");
            }
            PreparedStatement select1 = c.prepareStatement("SELECT 1");
            PreparedStatement lock = c.prepareStatement("SELECT pg_try_advisory_lock(?)");
            PreparedStatement unlock = c.prepareStatement("SELECT pg_advisory_unlock(?)");
            PreparedStatement bump = c.prepareStatement("UPDATE latchkey_bench SET v = v + 1 WHERE id = 1");
            PreparedStatement nextval = c.prepareStatement("SELECT pg_try_advisory_lock(?), nextval('latchkey_advisory_token_seq')");
            advisory.tryAcquire("bench/warm-up").orElseThrow().release(); // creates the schema
            run("SELECT 1 (one round trip)", n, () -> query(select1, 0));
            run("raw pg_try_advisory_lock + pg_advisory_unlock", n, () -> {
                query(lock, id);
                query(unlock, id);
            });
            run("raw lock+nextval in one statement + unlock (no commit wait)", n, () -> {
                query(nextval, id);
                query(unlock, id);
            });
            PreparedStatement lazyRow = c.prepareStatement("WITH l AS (SELECT pg_try_advisory_lock(?) AS got,"
                    + " set_config('synchronous_commit', 'off', true)) UPDATE latchkey_bench SET v = v + 1 FROM l WHERE id = 1 AND l.got");
            run("raw lock + row update (asynchronous commit) + unlock", n, () -> {
                lazyRow.setLong(1, id);
                lazyRow.executeUpdate();
                query(unlock, id);
            });
            run("two single-row durable commits (UPDATE ×2)", n, () -> {
                bump.executeUpdate();
                bump.executeUpdate();
            });
            run("latchkey mode=advisory tryAcquire + release", n, () -> {
                Lease l = advisory.tryAcquire("bench/advisory", quiet).orElseThrow();
                l.release();
            });
            run("latchkey mode=advisory&fencing=false tryAcquire + release", n, () -> {
                Lease l = noFencing.tryAcquire("bench/advisory-nofence", quiet).orElseThrow();
                l.release();
            });
            run("latchkey mode=lease tryAcquire + release", n, () -> {
                Lease l = lease.tryAcquire("bench/lease", quiet).orElseThrow();
                l.release();
            });
        }
    }

    private static void query(PreparedStatement ps, long id) throws SQLException {
        if (id != 0) ps.setLong(1, id);
        try (ResultSet rs = ps.executeQuery()) {
            rs.next();
        }
    }

    private static void run(String name, int n, Op op) throws Exception {
        for (int i = 0; i < Math.min(500, n); i++) op.run(); // warm-up: JIT, server-side prepared statements
        long[] t = new long[n];
        for (int i = 0; i < n; i++) {
            long s = System.nanoTime();
            op.run();
            t[i] = System.nanoTime() - s;
        }
        Arrays.sort(t);
        System.out.printf(Locale.ROOT, "%-62s p50 %7.1f µs  p90 %7.1f µs  p99 %7.1f µs%n", name,
                t[n / 2] / 1e3, t[n * 9 / 10] / 1e3, t[n * 99 / 100] / 1e3);
    }
}
