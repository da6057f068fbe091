package dev.latchkey.bench;

import dev.latchkey.Durations;
import dev.latchkey.Latchkey;
import dev.latchkey.Lease;
import dev.latchkey.LeaseOptions;
import dev.latchkey.LockManager;
import dev.latchkey.spi.LockContext;
import dev.latchkey.spi.LockUri;
import java.io.PrintWriter;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.BiFunction;

/**
 * The measurements behind {@code latchkey bench URI}, printed as one plain-text table:
 * <ul>
 *   <li>uncontended {@code tryAcquire}+{@code release} latency (p50/p99/p999), beside the scheme's
 *       {@link Baseline}s (floors, peers) measured the same way, in slices taken in turn so that
 *       all see the same load and JIT state, and the p50 ratios;</li>
 *   <li>throughput under contention: T threads of one manager over K keys, {@code tryAcquire}+{@code
 *       release}, beside every baseline that {@linkplain Baseline#hasSpread spreads} the same way
 *       (T sessions over K keys of its own), and the ratio of rates;</li>
 *   <li>handoff: a holder in manager A releases while a waiter blocked in {@code acquire} on
 *       manager B gets the lock — the time from release call to B holding; the same for every
 *       baseline that has a handoff;</li>
 *   <li>with {@code hold > 0}: N leases held at once with heartbeat on ({@link HoldPhase}):
 *       renewals per second and those that missed, heap, threads and sockets. Measured first,
 *       before the timed phases leave garbage and JIT state behind; printed last.</li>
 * </ul>
 * Every timed phase warms up first. Keys live under a random {@code latchkey-bench-…/} prefix and are
 * released at the end, so a bench can run against a shared store. Numbers are what this machine
 * did this time: nothing here asserts a timing.
 */
public final class LockBench {
    private static final int HANDOFF_WARMUP_ROUNDS = 3;
    private static final int HANDOFF_MIN_ROUNDS = 5;
    private static final int HANDOFF_MAX_ROUNDS = 2000;
    /** Pause before the holder releases, so B is really blocked in acquire rather than starting it. */
    private static final long HANDOFF_PARK_MILLIS = 10;
    /** Latency rows take turns in slices this long. */
    private static final long SLICE_MILLIS = 50;
    static final String THROUGHPUT_ROW = "throughput, tryAcquire+release";

    /**
     * @param uri      backend to measure
     * @param threads  threads of the throughput phase
     * @param keys     keys the throughput threads spread over
     * @param duration measuring time of each phase
     * @param warmup   warm-up time before each timed phase
     * @param hold     leases to hold at once in the scale phase; 0 skips it
     * @param holdTtl  TTL of those leases (heartbeat TTL/3), short so heartbeats run while measured
     */
    public record Config(String uri, int threads, int keys, Duration duration, Duration warmup, int hold,
                         Duration holdTtl) {
        public Config {
            Objects.requireNonNull(uri, "uri");
            if (threads < 1) throw new IllegalArgumentException("threads must be at least 1");
            if (keys < 1) throw new IllegalArgumentException("keys must be at least 1");
            if (duration.isNegative() || duration.isZero()) throw new IllegalArgumentException("duration must be positive");
            if (warmup.isNegative()) throw new IllegalArgumentException("warmup must not be negative");
            if (hold < 0) throw new IllegalArgumentException("hold must not be negative");
            LeaseOptions.ttl(holdTtl); // validates the TTL now rather than after the other phases
        }

        public static Config of(String uri) {
            return new Config(uri, 4, 64, Duration.ofSeconds(3), Duration.ofSeconds(1), 0, Duration.ofSeconds(3));
        }
    }

    /**
     * One line of the table. Latencies in microseconds and rate in operations per second; NaN where
     * not applicable.
     */
    public record Row(String name, double p50, double p99, double p999, double opsPerSecond, long samples, String note) {}

    private final Config config;
    private final BiFunction<String, LockContext, LockManager> open;
    private final String prefix = "latchkey-bench-" + UUID.randomUUID().toString().substring(0, 8) + "/";

    private LockBench(Config config, BiFunction<String, LockContext, LockManager> open) {
        this.config = config;
        this.open = open;
    }

    /** Runs every phase and prints the table to {@code out}; returns the rows printed. */
    public static List<Row> run(Config config, PrintWriter out) throws Exception {
        return run(config, out, Latchkey::open);
    }

    /**
     * As {@link #run(Config, PrintWriter)}, with the measured managers opened by {@code open} (the
     * command passes its own, which also knows the backends of its plugins).
     */
    public static List<Row> run(Config config, PrintWriter out, BiFunction<String, LockContext, LockManager> open) throws Exception {
        return new LockBench(config, open).run(out);
    }

    private List<Row> run(PrintWriter out) throws Exception {
        LockUri uri = LockUri.parse(config.uri());
        out.printf("latchkey bench %s: %d threads over %d keys, %s per phase after %s warm-up%n", uri,
                config.threads(), config.keys(), Durations.format(config.duration()), Durations.format(config.warmup()));
        out.flush();
        List<Baseline> baselines = Baseline.forScheme(uri.scheme());
        List<Row> rows = new ArrayList<>();
        List<String> ratios = new ArrayList<>();
        try (LockManager a = open.apply(config.uri(), LockContext.defaults());
             LockManager b = open.apply(config.uri(), LockContext.defaults())) {
            // first, while the heap holds nothing but the JVM and the manager: a stable baseline
            Row holding = config.hold() > 0
                    ? new HoldPhase(open, config.uri(), prefix, config.hold(), config.holdTtl()).run()
                    : null;
            List<Baseline.Session> sessions = new ArrayList<>();
            try {
                List<Timed> timed = new ArrayList<>();
                timed.add(new Timed("acquire+release, uncontended", new Holder(a, prefix + "latency"),
                        "heartbeat on, ttl 60s"));
                for (Baseline baseline : baselines) {
                    Baseline.Session session = baseline.open(uri);
                    sessions.add(session);
                    timed.add(new Timed(label(baseline), session(session), "same run, no Latchkey"));
                }
                List<Row> latencies = interleaved(timed);
                rows.addAll(latencies);
                for (Row row : latencies.subList(1, latencies.size())) {
                    ratios.add(String.format("p50s: acquire+release / %s = %.2f", row.name(), latencies.get(0).p50() / row.p50()));
                }
            } finally {
                closeAll(sessions);
            }
            rows.addAll(throughput(a, baselines, uri, ratios));
            String handoffKey = prefix + "handoff";
            Row handoff = handoff("handoff, release in A -> waiter in B holds", new Holder(a, handoffKey),
                    new Holder(b, handoffKey), "two managers, waiter blocked in acquire");
            rows.add(handoff);
            for (Baseline baseline : baselines) {
                if (!baseline.hasHandoff()) continue;
                try (Baseline.Session first = baseline.open(uri); Baseline.Session second = baseline.open(uri)) {
                    Row row = handoff("handoff, " + label(baseline), session(first), session(second),
                            "same run, no Latchkey");
                    rows.add(row);
                    ratios.add(String.format("p50s: handoff / %s handoff = %.2f", label(baseline), handoff.p50() / row.p50()));
                }
            }
            if (holding != null) rows.add(holding);
        }
        printTable(out, rows);
        if (ratios.isEmpty()) {
            out.printf("no baseline installed for %s:// (see dev.latchkey.bench.Baseline)%n", uri.scheme());
        }
        for (String ratio : ratios) out.println("ratio of " + ratio);
        out.flush();
        return rows;
    }

    private static String label(Baseline baseline) {
        return baseline.kind().name().toLowerCase(Locale.ROOT) + ": " + baseline.description();
    }

    /**
     * One side of a measurement: an uncontended acquire, an acquire that waits for the other side's
     * release, and the release.
     */
    private interface Contender {
        void acquire() throws Exception;

        void acquireWaiting() throws Exception;

        void release() throws Exception;
    }

    /** A Latchkey manager taking one key. */
    private static final class Holder implements Contender {
        private static final LeaseOptions OPTIONS = LeaseOptions.defaults();
        private final LockManager locks;
        private final String key;
        private Lease lease;

        Holder(LockManager locks, String key) {
            this.locks = locks;
            this.key = key;
        }

        @Override
        public void acquire() {
            lease = locks.tryAcquire(key, OPTIONS)
                    .orElseThrow(() -> new IllegalStateException("bench key " + key + " is held by someone else"));
        }

        @Override
        public void acquireWaiting() throws InterruptedException {
            lease = locks.acquire(key, Duration.ofSeconds(60), OPTIONS);
        }

        @Override
        public void release() {
            lease.release();
        }
    }

    private static Contender session(Baseline.Session session) {
        return new Contender() {
            @Override
            public void acquire() throws Exception {
                session.acquire();
            }

            @Override
            public void acquireWaiting() throws Exception {
                session.acquireWaiting();
            }

            @Override
            public void release() throws Exception {
                session.release();
            }
        };
    }

    /** One row of the latency phase while it is measured. */
    private static final class Timed {
        final String name;
        final Contender side;
        final String note;
        final Samples samples = new Samples();
        long cpuNanos;
        long wallNanos;

        Timed(String name, Contender side, String note) {
            this.name = name;
            this.side = side;
            this.note = note;
        }

        /** Acquire+release rounds for about {@code sliceNanos} (at least one); records them if {@code record}. */
        void slice(long sliceNanos, boolean record, ThreadMXBean threads) throws Exception {
            long cpuStart = threads.getCurrentThreadCpuTime();
            long start = System.nanoTime();
            long end = start + sliceNanos;
            long now = start;
            do {
                side.acquire();
                side.release();
                long after = System.nanoTime();
                if (record) samples.add(after - now);
                now = after;
            } while (now < end);
            if (record) {
                cpuNanos += threads.getCurrentThreadCpuTime() - cpuStart;
                wallNanos += now - start;
            }
        }

        Row row() {
            // CPU time of this thread per op: the cost itself, unlike wall-clock percentiles, does not
            // grow when a busy machine preempts the thread
            return new Row(name, samples.percentileMicros(0.50), samples.percentileMicros(0.99),
                    samples.percentileMicros(0.999), samples.size() / (wallNanos / 1e9), samples.size(),
                    String.format("cpu %.2f us/op; %s", cpuNanos / 1e3 / samples.size(), note));
        }
    }

    /**
     * Uncontended acquire+release of every row, one thread, in slices of {@link #SLICE_MILLIS} taken
     * in turn — for the warm-up, then for the measurement (each row gets about the configured time
     * in all) — so the lock and its baselines see the same machine load and the same JIT state.
     */
    private List<Row> interleaved(List<Timed> timed) {
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        long slice = TimeUnit.MILLISECONDS.toNanos(SLICE_MILLIS);
        Timed current = timed.get(0);
        try {
            for (boolean record : new boolean[] {false, true}) {
                long perRow = record ? config.duration().toNanos() : config.warmup().toNanos();
                long end = System.nanoTime() + perRow * timed.size();
                do {
                    for (Timed t : timed) {
                        current = t;
                        t.slice(slice, record, threads);
                    }
                } while (System.nanoTime() < end);
            }
        } catch (RuntimeException e) {
            throw e;
        } catch (Exception e) {
            throw new IllegalStateException(current.name + " failed: " + e.getMessage(), e);
        }
        List<Row> rows = new ArrayList<>();
        for (Timed t : timed) rows.add(t.row());
        return rows;
    }

    private static void closeAll(List<Baseline.Session> sessions) throws Exception {
        Exception first = null;
        for (Baseline.Session session : sessions) {
            try {
                session.close();
            } catch (Exception e) {
                if (first == null) first = e;
                else first.addSuppressed(e);
            }
        }
        if (first != null) throw first;
    }

    /**
     * T threads of one manager over K keys, {@code tryAcquire}+{@code release}; then, the same way,
     * every baseline that spreads (each thread on a session of its own), with the ratio of rates.
     */
    private List<Row> throughput(LockManager locks, List<Baseline> baselines, LockUri uri, List<String> ratios)
            throws Exception {
        String[] keys = new String[config.keys()];
        for (int i = 0; i < keys.length; i++) keys[i] = prefix + "tp-" + i;
        LeaseOptions options = LeaseOptions.defaults();
        Contention.Round round = key -> {
            Optional<Lease> lease = locks.tryAcquire(keys[key], options);
            lease.ifPresent(Lease::release);
            return lease.isPresent();
        };
        List<Row> rows = new ArrayList<>();
        Row lock = contended(THROUGHPUT_ROW, Collections.nCopies(config.threads(), round), "");
        rows.add(lock);
        for (Baseline baseline : baselines) {
            if (!baseline.hasSpread(uri)) continue;
            List<Baseline.Session> sessions = new ArrayList<>();
            try {
                List<Contention.Round> rounds = new ArrayList<>();
                for (int t = 0; t < config.threads(); t++) {
                    Baseline.Session session = baseline.open(uri);
                    sessions.add(session);
                    rounds.add(session::tryRound);
                }
                Row row = contended("throughput, " + label(baseline), rounds, ", same run, no Latchkey");
                rows.add(row);
                ratios.add(String.format("rates: throughput / %s throughput = %.2f", label(baseline),
                        lock.opsPerSecond() / row.opsPerSecond()));
            } finally {
                closeAll(sessions);
            }
        }
        return rows;
    }

    /** One throughput row: warm-up, then the measurement, over the configured keys. */
    private Row contended(String name, List<Contention.Round> rounds, String note) throws InterruptedException {
        Contention.run(name, rounds, config.keys(), config.warmup());
        Contention.Count count = Contention.run(name, rounds, config.keys(), config.duration());
        return new Row(name, Double.NaN, Double.NaN, Double.NaN, count.done() / (config.duration().toNanos() / 1e9),
                count.done(), String.format("%d threads over %d keys, busy %.1f%%%s", rounds.size(), config.keys(),
                        count.busyPercent(), note));
    }

    /**
     * A holds; B waits in {@code acquireWaiting} on another thread; A releases: the time from A's
     * release call to B holding.
     */
    private Row handoff(String name, Contender a, Contender b, String note) throws Exception {
        Samples samples = new Samples();
        ExecutorService waiter = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "latchkey-bench-waiter");
            t.setDaemon(true);
            return t;
        });
        try {
            long end = Long.MAX_VALUE;
            for (int round = 0; round < HANDOFF_MAX_ROUNDS; round++) {
                if (round == HANDOFF_WARMUP_ROUNDS) end = System.nanoTime() + config.duration().toNanos();
                if (round >= HANDOFF_WARMUP_ROUNDS + HANDOFF_MIN_ROUNDS && System.nanoTime() >= end) break;
                a.acquire();
                CountDownLatch waiting = new CountDownLatch(1);
                Future<Long> holding = waiter.submit(() -> {
                    waiting.countDown();
                    b.acquireWaiting();
                    long at = System.nanoTime();
                    b.release();
                    return at;
                });
                waiting.await();
                Thread.sleep(HANDOFF_PARK_MILLIS);
                long released = System.nanoTime();
                a.release();
                long acquired = holding.get();
                if (round >= HANDOFF_WARMUP_ROUNDS) samples.add(acquired - released);
            }
        } catch (ExecutionException e) {
            throw new IllegalStateException(name + " failed: " + e.getCause(), e.getCause());
        } finally {
            waiter.shutdownNow();
        }
        return new Row(name, samples.percentileMicros(0.50), samples.percentileMicros(0.99),
                samples.percentileMicros(0.999), Double.NaN, samples.size(), note);
    }

    private static void printTable(PrintWriter out, List<Row> rows) {
        int width = rows.stream().mapToInt(r -> r.name().length()).max().orElse(10);
        String head = "%-" + width + "s %10s %10s %10s %12s %9s  %s%n";
        out.printf(head, "measurement", "p50 us", "p99 us", "p999 us", "ops/s", "samples", "note");
        for (Row r : rows) {
            out.printf(head, r.name(), num(r.p50()), num(r.p99()), num(r.p999()), rate(r.opsPerSecond()),
                    r.samples(), r.note());
        }
    }

    private static String num(double v) {
        if (Double.isNaN(v)) return "-";
        return v < 10 ? String.format("%.2f", v) : v < 1000 ? String.format("%.1f", v) : String.format("%.0f", v);
    }

    private static String rate(double v) {
        return Double.isNaN(v) ? "-" : String.format("%.0f", v);
    }
}
