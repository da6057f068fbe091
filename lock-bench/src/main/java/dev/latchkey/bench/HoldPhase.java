package dev.latchkey.bench;

import dev.latchkey.Durations;
import dev.latchkey.Lease;
import dev.latchkey.LeaseLostException;
import dev.latchkey.LeaseOptions;
import dev.latchkey.LockListener;
import dev.latchkey.LockManager;
import dev.latchkey.spi.LockContext;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.BiFunction;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * The scale phase of {@code latchkey bench --hold N}: N leases held at once with heartbeat on, for
 * one TTL, through a manager of its own opened with a counting {@link LockListener}, and what that
 * costs: renewals per second (from the manager's own {@code renewed} events, against the N ×
 * 1/heartbeat due), renewals that missed ({@code renewalFailed} and {@code lost} events), leases
 * still valid at the end, heap beyond the manager's, JVM threads (the library's by name) and open
 * sockets ({@code /proc/self/fd}, Linux only) beyond those before the manager opened.
 *
 * <p>Counts are what the listener saw: its events are dropped when its queue is full
 * ({@link LockListener}), so the phase checks that it saw all N acquisitions and all N releases and
 * says so in the row when it did not — a low count is then the listener's, not the store's.
 * Requests per renewal are a property of the backend (see the benchmarks page), not counted here.
 */
final class HoldPhase {
    /** How long the phase waits for the listener to see the N acquisitions and releases. */
    private static final Duration EVENTS_SETTLE = Duration.ofSeconds(30);

    private final BiFunction<String, LockContext, LockManager> open;
    private final String uri;
    private final String prefix;
    private final int leases;
    private final Duration ttl;

    HoldPhase(BiFunction<String, LockContext, LockManager> open, String uri, String prefix, int leases, Duration ttl) {
        this.open = open;
        this.uri = uri;
        this.prefix = prefix;
        this.leases = leases;
        this.ttl = ttl;
    }

    /** The manager's events, counted. */
    private static final class Counter implements LockListener {
        final LongAdder acquired = new LongAdder();
        final LongAdder renewed = new LongAdder();
        final LongAdder failed = new LongAdder();
        final LongAdder lost = new LongAdder();
        final LongAdder released = new LongAdder();

        @Override
        public void acquired(String scheme, String key, Duration latency) {
            acquired.increment();
        }

        @Override
        public void renewed(String scheme, String key, Duration validFor) {
            renewed.increment();
        }

        @Override
        public void renewalFailed(String scheme, String key, Duration validLeft, RuntimeException error) {
            failed.increment();
        }

        @Override
        public void lost(String scheme, String key, Duration held, LeaseLostException cause) {
            lost.increment();
        }

        @Override
        public void released(String scheme, String key, Duration held, boolean confirmed) {
            released.increment();
        }
    }

    LockBench.Row run() throws InterruptedException {
        int threadsBefore = ManagementFactory.getThreadMXBean().getThreadCount();
        int socketsBefore = openSockets();
        Counter counter = new Counter();
        LeaseOptions options = LeaseOptions.ttl(ttl);
        List<Lease> leases = new ArrayList<>(this.leases);
        String note;
        long renewals;
        double renewalsPerSecond;
        boolean sawAll;
        try (LockManager locks = open.apply(uri, LockContext.defaults().withListener(counter))) {
            long heapBefore = usedHeapAfterGc();
            try {
                long start = System.nanoTime();
                for (int i = 0; i < this.leases; i++) {
                    String key = prefix + "hold-" + i;
                    leases.add(locks.tryAcquire(key, options)
                            .orElseThrow(() -> new IllegalStateException("bench key " + key + " is held by someone else")));
                }
                double acquireSeconds = (System.nanoTime() - start) / 1e9;
                sawAll = await(counter.acquired, this.leases);
                // one full TTL: every lease is due about three renewals while we count
                long renewedBefore = counter.renewed.sum();
                long windowStart = System.nanoTime();
                Thread.sleep(ttl.toMillis());
                renewals = counter.renewed.sum() - renewedBefore;
                renewalsPerSecond = renewals / ((System.nanoTime() - windowStart) / 1e9);
                long valid = leases.stream().filter(Lease::isValid).count();
                long heap = usedHeapAfterGc() - heapBefore;
                int threads = ManagementFactory.getThreadMXBean().getThreadCount() - threadsBefore;
                int sockets = openSockets();
                double due = this.leases / (options.heartbeat().toNanos() / 1e9);
                note = String.format("ttl %s, renewed every %s: %.0f renewals/s of %.0f due, %d failed, %d lost, "
                                + "%d/%d valid after one ttl; heap +%.1f MB; threads +%d (%s); sockets %s; acquired at %.0f/s",
                        Durations.format(ttl), Durations.format(options.heartbeat()), renewalsPerSecond, due,
                        counter.failed.sum(), counter.lost.sum(), valid, leases.size(), heap / (1024.0 * 1024.0),
                        threads, libraryThreads(), socketsBefore < 0 ? "n/a" : "+" + (sockets - socketsBefore),
                        this.leases / acquireSeconds);
            } finally {
                releaseAll(leases);
            }
            sawAll &= await(counter.released, leases.size());
        }
        if (!sawAll) note += "; the listener dropped events (queue full), so its counts are low";
        return new LockBench.Row("hold " + this.leases + " leases, heartbeat on", Double.NaN, Double.NaN, Double.NaN,
                renewalsPerSecond, renewals, note);
    }

    /** Waits (bounded by {@link #EVENTS_SETTLE}) until {@code count} reaches {@code target}; false if it did not. */
    private static boolean await(LongAdder count, long target) throws InterruptedException {
        long deadline = System.nanoTime() + EVENTS_SETTLE.toNanos();
        while (count.sum() < target) {
            if (System.nanoTime() >= deadline) return false;
            Thread.sleep(10); // the events thread gives no other signal; polling a counter is cheap
        }
        return true;
    }

    private static void releaseAll(List<Lease> leases) {
        for (Lease lease : leases) {
            try {
                lease.release();
            } catch (RuntimeException e) {
                // a lease lost during the hold is already counted as lost and not valid
            }
        }
    }

    /** Live {@code latchkey-*} threads by name without their number, e.g. {@code renewer-s3 2, events-s3 1}. */
    private static String libraryThreads() {
        Map<String, Long> byName = Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.isAlive() && t.getName().startsWith("latchkey-") && !t.getName().startsWith("latchkey-bench"))
                .collect(Collectors.groupingBy(t -> t.getName().substring("latchkey-".length()).replaceAll("-[0-9]+$", ""),
                        TreeMap::new, Collectors.counting()));
        return byName.entrySet().stream().map(e -> e.getKey() + " " + e.getValue()).collect(Collectors.joining(", "));
    }

    /** Open sockets of this process ({@code socket:[…]} links in {@code /proc/self/fd}); -1 where there is no {@code /proc}. */
    static int openSockets() {
        Path fds = Path.of("/proc/self/fd");
        if (!Files.isDirectory(fds)) return -1;
        try (Stream<Path> links = Files.list(fds)) {
            return (int) links.filter(HoldPhase::isSocket).count();
        } catch (IOException e) {
            return -1;
        }
    }

    private static boolean isSocket(Path fd) {
        try {
            return Files.readSymbolicLink(fd).toString().startsWith("socket:");
        } catch (IOException e) {
            return false; // closed while listed (e.g. the listing's own descriptor)
        }
    }

    /** The least heap use seen right after each of three full collections: floating garbage inflates single readings. */
    private static long usedHeapAfterGc() {
        long least = Long.MAX_VALUE;
        for (int i = 0; i < 3; i++) {
            System.gc();
            least = Math.min(least, ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed());
        }
        return least;
    }
}
