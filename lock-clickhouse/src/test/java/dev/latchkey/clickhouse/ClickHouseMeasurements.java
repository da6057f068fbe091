package dev.latchkey.clickhouse;

import com.clickhouse.client.api.Client;
import com.clickhouse.client.api.command.CommandResponse;
import com.clickhouse.client.api.command.CommandSettings;
import dev.latchkey.Latchkey;
import dev.latchkey.Lease;
import dev.latchkey.LeaseOptions;
import dev.latchkey.LockManager;
import dev.latchkey.bench.Baseline;
import dev.latchkey.bench.LockBench;
import dev.latchkey.spi.LockUri;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * The figures of the README's ClickHouse section, by hand (not a test: it runs for minutes and
 * only prints). Against a server of its own:
 * <pre>
 *   bash scripts/clickhouse.sh start /tmp/chbench        # prints clickhouse://default@127.0.0.1:PORT/latchkey
 *   java -cp … dev.latchkey.clickhouse.ClickHouseMeasurements URI [bench|release|all|warm]
 *   bash scripts/clickhouse.sh stop /tmp/chbench
 * </pre>
 * <ul>
 *   <li>{@code bench}: {@code latchkey bench} ({@link LockBench}, CLI defaults: 4 threads, 64 keys,
 *       1 s warm-up) at settle 1 s (15 s per phase, so at least ten samples), 100 ms and 10 ms (10 s
 *       per phase), each with the {@code SELECT 1} floor of the same run;</li>
 *   <li>{@code release}: the release of a held lease as the backend does it (a conditional
 *       tombstone insert) against a lightweight {@code DELETE} of the holder's row with
 *       {@code lightweight_deletes_sync = 2} (the only kind after which readers no longer see the
 *       row), interleaved round by round, on fresh keys and on one hot key, beside {@code SELECT 1}.</li>
 * </ul>
 */
public final class ClickHouseMeasurements {
    private static final int RELEASE_ROUNDS = 60;

    private ClickHouseMeasurements() {}

    public static void main(String[] args) throws Exception {
        if (args.length < 1) {
            System.err.println("usage: ClickHouseMeasurements clickhouse://… [bench|release|all]");
            System.exit(2);
        }
        String base = args[0];
        String what = args.length > 1 ? args[1] : "all";
        String tag = UUID.randomUUID().toString().substring(0, 8);
        if (what.equals("bench") || what.equals("all")) bench(base, tag);
        if (what.equals("release") || what.equals("all")) release(base, tag);
        if (what.equals("warm")) warm(base, tag);
    }

    private static String with(String base, String params) {
        return base + (base.contains("?") ? "&" : "?") + params;
    }

    private static void bench(String base, String tag) throws Exception {
        PrintWriter out = new PrintWriter(System.out, true);
        Object[][] runs = {{"1s", Duration.ofSeconds(15)}, {"100ms", Duration.ofSeconds(10)}, {"10ms", Duration.ofSeconds(10)}};
        for (Object[] run : runs) {
            String uri = with(base, "table=bench_" + tag + "&settle=" + run[0]);
            out.println();
            out.println("== settle=" + run[0] + " (load " + load() + ")");
            List<LockBench.Row> rows = LockBench.run(new LockBench.Config(uri, 4, 64, (Duration) run[1], Duration.ofSeconds(1),
                    0, Duration.ofSeconds(3)), out);
            LockBench.Row latency = rows.get(0);
            LockBench.Row floor = rows.stream().filter(r -> r.name().startsWith("floor:")).findFirst().orElseThrow();
            double settleUs = settleMicros(run[0].toString());
            out.printf("acquire+release p50 - settle = %.1f ms = %.1f x floor p50 (%.2f ms); p99 - settle = %.1f ms%n",
                    (latency.p50() - settleUs) / 1000, (latency.p50() - settleUs) / floor.p50(), floor.p50() / 1000,
                    (latency.p99() - settleUs) / 1000);
        }
    }

    /**
     * Settle 1 s after a 15 s warm-up: at one acquisition a second the bench's 1 s warm-up runs the
     * client's code about once, so the 1 s row also pays for an unwarmed JIT; this row does not.
     */
    private static void warm(String base, String tag) throws Exception {
        PrintWriter out = new PrintWriter(System.out, true);
        String uri = with(base, "table=bench_" + tag + "&settle=1s");
        out.println();
        out.println("== settle=1s after a 15s warm-up (load " + load() + ")");
        List<LockBench.Row> rows = LockBench.run(new LockBench.Config(uri, 4, 64, Duration.ofSeconds(15), Duration.ofSeconds(15),
                0, Duration.ofSeconds(3)), out);
        LockBench.Row latency = rows.get(0);
        LockBench.Row floor = rows.stream().filter(r -> r.name().startsWith("floor:")).findFirst().orElseThrow();
        out.printf("acquire+release p50 - settle = %.1f ms = %.1f x floor p50 (%.2f ms); p99 - settle = %.1f ms%n",
                (latency.p50() - 1e6) / 1000, (latency.p50() - 1e6) / floor.p50(), floor.p50() / 1000, (latency.p99() - 1e6) / 1000);
    }

    private static double settleMicros(String text) {
        return text.endsWith("ms") ? Double.parseDouble(text.substring(0, text.length() - 2)) * 1000
                : Double.parseDouble(text.substring(0, text.length() - 1)) * 1_000_000;
    }

    private static void release(String base, String tag) throws Exception {
        String table = "release_" + tag;
        String uri = with(base, "table=" + table + "&settle=10ms");
        ClickHouseSettings settings = ClickHouseSettings.from(LockUri.parse(uri));
        LeaseOptions options = LeaseOptions.ttl(Duration.ofSeconds(60)).withHeartbeat(Duration.ZERO);
        String hotTomb = "hot-tombstone-" + tag;
        String hotDelete = "hot-delete-" + tag;
        long[] select = new long[RELEASE_ROUNDS];
        long[] tombFresh = new long[RELEASE_ROUNDS];
        long[] deleteFresh = new long[RELEASE_ROUNDS];
        long[] tombHot = new long[RELEASE_ROUNDS];
        long[] deleteHot = new long[RELEASE_ROUNDS];
        long[] acquireTombHot = new long[RELEASE_ROUNDS];
        long[] acquireDeleteHot = new long[RELEASE_ROUNDS];
        long[] acquireFresh = new long[RELEASE_ROUNDS];
        long[] readFresh = new long[RELEASE_ROUNDS];
        long[] readHot = new long[RELEASE_ROUNDS];
        int stillVisibleAfterDelete = 0;
        System.out.println();
        System.out.println("== release: tombstone vs lightweight DELETE, " + RELEASE_ROUNDS + " rounds each (load " + load() + ")");
        try (LockManager locks = Latchkey.open(uri); Client client = settings.newClient();
             Baseline.Session floor = new ClickHouseBaseline().open(LockUri.parse(uri))) {
            for (int warm = 0; warm < 5; warm++) {
                floor.acquire();
                held(locks, "warm-" + warm, options).release();
            }
            for (int i = 0; i < RELEASE_ROUNDS; i++) {
                long t = System.nanoTime();
                floor.acquire();
                select[i] = System.nanoTime() - t;

                t = System.nanoTime();
                Lease a = held(locks, "fresh-t-" + i + "-" + tag, options);
                acquireFresh[i] = System.nanoTime() - t;
                t = System.nanoTime();
                locks.inspect(a.key()); // one read: the query acquire runs twice
                readFresh[i] = System.nanoTime() - t;
                t = System.nanoTime();
                a.release();
                tombFresh[i] = System.nanoTime() - t;

                Lease b = held(locks, "fresh-d-" + i + "-" + tag, options);
                t = System.nanoTime();
                delete(client, settings, b);
                deleteFresh[i] = System.nanoTime() - t;
                if (locks.inspect(b.key()).isPresent()) stillVisibleAfterDelete++;

                t = System.nanoTime();
                Lease c = held(locks, hotTomb, options);
                acquireTombHot[i] = System.nanoTime() - t;
                t = System.nanoTime();
                locks.inspect(hotTomb);
                readHot[i] = System.nanoTime() - t;
                t = System.nanoTime();
                c.release();
                tombHot[i] = System.nanoTime() - t;

                t = System.nanoTime();
                Lease d = held(locks, hotDelete, options);
                acquireDeleteHot[i] = System.nanoTime() - t;
                t = System.nanoTime();
                delete(client, settings, d);
                deleteHot[i] = System.nanoTime() - t;
                if (locks.inspect(d.key()).isPresent()) stillVisibleAfterDelete++;
            }
            String rowsOnHotKey = ClickHouseTestServer.sql(uri, "SELECT count(), uniqExact(lock_id) FROM `"
                    + settings.database() + "`.`" + table + "` WHERE state_id = '" + hotTomb + "'");
            System.out.println("what (ms)                                         p50     p75     p90     p99     max  >100ms");
            print("SELECT 1 (floor)", select);
            print("release = conditional tombstone, fresh key", tombFresh);
            print("release = DELETE sync=2, fresh key", deleteFresh);
            print("release = conditional tombstone, hot key", tombHot);
            print("release = DELETE sync=2, hot key", deleteHot);
            print("read candidates (inspect), fresh key", readFresh);
            print("read candidates (inspect), hot key", readHot);
            print("tryAcquire (settle 10ms), fresh key", acquireFresh);
            print("tryAcquire (settle 10ms), hot key w/ tombstones", acquireTombHot);
            print("tryAcquire (settle 10ms), hot key w/ DELETE", acquireDeleteHot);
            System.out.println("key still held right after a DELETE: " + stillVisibleAfterDelete + " of " + 2 * RELEASE_ROUNDS);
            System.out.println("tombstoned hot key: rows, lock_ids in table = " + rowsOnHotKey.replace('\t', ' '));
        }
    }

    private static Lease held(LockManager locks, String key, LeaseOptions options) {
        return locks.tryAcquire(key, options).orElseThrow(() -> new IllegalStateException(key + " is busy"));
    }

    /** What a DELETE-based release would send: remove exactly the holder's row, wait until readers no longer see it. */
    private static void delete(Client client, ClickHouseSettings settings, Lease lease) throws Exception {
        CommandSettings sync = new CommandSettings();
        sync.serverSetting("lightweight_deletes_sync", "2");
        try (CommandResponse r = client.execute("DELETE FROM " + settings.qualifiedTable()
                + " WHERE state_id = {key:String} AND lock_id = {id:String}",
                Map.of("key", lease.key(), "id", lease.leaseId()), sync).get()) {
            r.getWrittenRows();
        }
    }

    private static void print(String name, long[] nanos) {
        long[] s = nanos.clone();
        Arrays.sort(s);
        long slow = Arrays.stream(s).filter(n -> n > 100_000_000L).count();
        System.out.printf("%-48s %7.1f %7.1f %7.1f %7.1f %7.1f %4d/%d%n", name, pct(s, 0.5), pct(s, 0.75), pct(s, 0.9),
                pct(s, 0.99), s[s.length - 1] / 1e6, slow, s.length);
    }

    private static double pct(long[] sorted, double p) {
        int i = (int) Math.ceil(p * sorted.length) - 1;
        return sorted[Math.max(0, Math.min(sorted.length - 1, i))] / 1e6;
    }

    private static String load() {
        List<String> out = new ArrayList<>();
        try {
            String line = java.nio.file.Files.readString(java.nio.file.Path.of("/proc/loadavg")).trim();
            out.addAll(Arrays.asList(line.split(" ")).subList(0, 3));
        } catch (Exception e) {
            out.add("?");
        }
        return String.join(" ", out);
    }
}
