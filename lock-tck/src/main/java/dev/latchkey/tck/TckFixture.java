package dev.latchkey.tck;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import dev.latchkey.Lease;
import dev.latchkey.LeaseOptions;
import dev.latchkey.LockBackendException;
import dev.latchkey.LockManager;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * What the TCK's contracts share within one test: a random tag that keeps keys apart across tests
 * and runs on a shared store, the managers and leases to clean up afterwards, and the small
 * polling and threading helpers. One instance per test.
 */
final class TckFixture {
    /** Limit for events that must happen "soon" (a listener firing, a single call returning). */
    static final Duration GENEROUS = Duration.ofSeconds(30);

    final String tag = "tck-" + UUID.randomUUID().toString().substring(0, 8);
    private final List<LockManager> managers = new CopyOnWriteArrayList<>();
    private final List<Lease> leases = new CopyOnWriteArrayList<>();

    /** Key unique to this test: {@code <tag>/<name>}. */
    String key(String name) {
        return tag + "/" + name;
    }

    String owner(String role) {
        return "tck-" + role + "@" + tag;
    }

    LockManager track(LockManager m) {
        assertThat(m).as("newManager returned null").isNotNull();
        managers.add(m);
        return m;
    }

    Lease track(Lease lease) {
        if (lease != null) leases.add(lease);
        return lease;
    }

    Optional<Lease> track(Optional<Lease> lease) {
        lease.ifPresent(leases::add);
        return lease;
    }

    Optional<Lease> tryTake(LockManager m, String k, LeaseOptions o) {
        return track(m.tryAcquire(k, o));
    }

    /** A tryAcquire that must succeed. */
    Lease hold(LockManager m, String k, LeaseOptions o) {
        return tryTake(m, k, o).orElseThrow(() -> new AssertionError("tryAcquire of free key " + show(k) + " failed"));
    }

    /** Polls tryAcquire every {@code poll} until it succeeds; fails after {@code limit}. */
    Lease pollUntilAcquired(LockManager m, String k, LeaseOptions o, Duration limit, Duration poll)
            throws InterruptedException {
        long start = System.nanoTime();
        while (System.nanoTime() - start < limit.toNanos()) {
            Optional<Lease> l = tryTake(m, k, o);
            if (l.isPresent()) return l.get();
            pace(poll);
        }
        return fail("key " + show(k) + " was still not free after " + limit.toMillis() + " ms of polling");
    }

    /**
     * Starts a contender that polls {@code k} until it gets it, and notes whether {@code holder}
     * was still valid at that moment and when its loss listener fired.
     */
    TakeoverWatch watchTakeover(LockManager contender, String k, Lease holder, LeaseOptions o, Duration poll) {
        return new TakeoverWatch(this, contender, k, holder, o, poll);
    }

    /** Releases what is still valid (errors expected: the test asserted what mattered), closes every manager. */
    void closeAll() {
        RuntimeException first = null;
        for (Lease lease : leases) {
            try {
                if (lease.isValid()) lease.release();
            } catch (RuntimeException e) {
                // lost or already released leases are expected here
            }
        }
        for (LockManager m : managers) {
            try {
                m.close();
            } catch (RuntimeException e) {
                if (first == null) first = e;
            }
        }
        leases.clear();
        managers.clear();
        if (first != null) throw first;
    }

    interface Worker {
        Void run(int index) throws Exception;
    }

    /**
     * Runs {@code threads} workers released together. If any fails, the others are stopped and the
     * failure is rethrown with every other worker's failure attached (suppressed), so a worker's
     * exception never hides what the rest saw.
     */
    static void runConcurrently(int threads, Worker worker) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            CountDownLatch go = new CountDownLatch(1);
            List<Future<Void>> results = new ArrayList<>();
            for (int i = 0; i < threads; i++) {
                int index = i;
                results.add(pool.submit(() -> {
                    go.await();
                    return worker.run(index);
                }));
            }
            go.countDown();
            Throwable first = null;
            for (Future<Void> f : results) {
                try {
                    f.get();
                } catch (ExecutionException e) {
                    if (first == null) first = e.getCause();
                    else first.addSuppressed(e.getCause());
                }
            }
            if (first instanceof Exception e) throw e;
            if (first instanceof Error e) throw e;
        } finally {
            pool.shutdownNow();
        }
    }

    static <T> T within(Duration limit, String what, Callable<T> call) throws Exception {
        ExecutorService one = Executors.newSingleThreadExecutor();
        try {
            return one.submit(call).get(limit.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            return fail(what + " did not return within " + limit.toSeconds() + " s");
        } catch (ExecutionException e) {
            if (e.getCause() instanceof Exception) throw (Exception) e.getCause();
            throw e;
        } finally {
            one.shutdownNow();
        }
    }

    /**
     * Renews {@code lease} on a healthy store. A retriable failure while the lease is still valid is
     * tried again: a backend may bound a renewal's reply by a fraction of the TTL, by design, and a
     * loaded machine can pass that bound without anything being wrong. A loss, a permanent failure,
     * or a failure once the lease has run out fails the caller; so a backend whose renewals never
     * land still fails, when its lease's validity ends.
     */
    static void renewWhileValid(Lease lease) throws InterruptedException {
        retryWhileValid(lease, lease::renew);
    }

    /** {@link #renewWhileValid(Lease)} with a new TTL ({@link Lease#renew(Duration)}). */
    static void renewWhileValid(Lease lease, Duration ttl) throws InterruptedException {
        retryWhileValid(lease, () -> lease.renew(ttl));
    }

    /** {@link Lease#release(Duration)} on a healthy store, tried again as {@link #renewWhileValid(Lease)} is (a failed one changes nothing). */
    static void releaseKeepingWhileValid(Lease lease, Duration keepFor) throws InterruptedException {
        retryWhileValid(lease, () -> lease.release(keepFor));
    }

    private static void retryWhileValid(Lease lease, Runnable renewal) throws InterruptedException {
        while (true) {
            try {
                renewal.run();
                return;
            } catch (LockBackendException e) {
                if (!e.isRetriable() || !lease.isValid()) throw e;
                pace(Duration.ofMillis(10));
            }
        }
    }

    /** Pacing between polls (not synchronisation: every test asserts on observed state). */
    static void pace(Duration d) throws InterruptedException {
        if (!d.isNegative() && !d.isZero()) TimeUnit.NANOSECONDS.sleep(d.toNanos());
    }

    /** Paces until {@code startNanos + offset} on the monotonic clock. */
    static void paceUntil(long startNanos, Duration offset) throws InterruptedException {
        pace(Duration.ofNanos(startNanos + offset.toNanos() - System.nanoTime()));
    }

    static long elapsedMillis(long startNanos) {
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNanos);
    }

    /**
     * One critical section of a contention worker under {@code lease}: entered and left through the
     * referee, and the lease noted in {@code invalidInside} (as {@code who}) if it was not valid inside.
     */
    static void criticalSection(CriticalSectionChecker checker, Lease lease, List<String> invalidInside, String who) {
        checker.enter(lease.fencingToken());
        try {
            if (!lease.isValid()) invalidInside.add(who + ": " + describe(lease));
            checker.work();
        } finally {
            checker.exit();
        }
    }

    /**
     * A lease for a failure message, whatever its class's {@code toString}: key, lease id, owner,
     * fencing token, validity and expiry — what a lease carries, no credential.
     */
    static String describe(Lease lease) {
        if (lease == null) return "no lease";
        return "lease " + lease.leaseId() + " on " + show(lease.key()) + " (owner " + lease.owner() + ", token "
                + lease.fencingToken() + ", " + (lease.isValid() ? "valid" : "invalid") + ", expires " + lease.expiresAt() + ")";
    }

    /**
     * The verdict of a contention run: fails with every broken invariant of {@code checker}, the
     * sections entered with an invalid lease, a short count, and a worker's failure — together, so
     * that neither a worker's exception nor the referee's report hides the other.
     *
     * @param workerFailure what a worker threw, or null; it becomes the cause
     */
    static void assertContention(String what, CriticalSectionChecker checker, boolean fencing, int expectedSections,
                                 List<String> invalidInside, Throwable workerFailure) {
        List<String> broken = new ArrayList<>(checker.problems(fencing));
        if (!invalidInside.isEmpty()) broken.add("sections entered with an invalid lease: " + listed(invalidInside));
        if (workerFailure == null && checker.sections() != expectedSections) {
            broken.add(checker.sections() + " sections run, " + expectedSections + " expected");
        }
        if (workerFailure != null) broken.add("a worker failed: " + workerFailure);
        if (!broken.isEmpty()) {
            throw new AssertionError(what + " (" + checker.summary() + "):\n" + String.join("\n", broken), workerFailure);
        }
    }

    /** What {@code run} threw (an exception or a failed assertion), or null. */
    static Throwable failureOf(Run run) {
        try {
            run.run();
            return null;
        } catch (Exception | AssertionError e) {
            return e;
        }
    }

    interface Run {
        void run() throws Exception;
    }

    /** Problems listed in a failure message before the rest are only counted. */
    static final int SHOWN_PROBLEMS = 10;

    /**
     * Fails naming {@code invariant} unless {@code problems} is empty; a long list is summarised
     * (how many, the first {@value #SHOWN_PROBLEMS}), so the message stays readable.
     */
    static void assertNone(List<String> problems, String invariant) {
        if (!problems.isEmpty()) throw new AssertionError(invariant + ": " + listed(problems));
    }

    /** {@code problems} for a message: how many, then the first {@value #SHOWN_PROBLEMS}, one a line. */
    static String listed(List<String> problems) {
        StringBuilder sb = new StringBuilder().append(problems.size()).append(problems.size() == 1 ? " problem" : " problems");
        int shown = Math.min(problems.size(), SHOWN_PROBLEMS);
        if (shown < problems.size()) sb.append(", the first ").append(shown);
        for (String p : problems.subList(0, shown)) sb.append("\n  - ").append(p);
        if (shown < problems.size()) sb.append("\n  … and ").append(problems.size() - shown).append(" more");
        return sb.toString();
    }

    /** A key as Java source text, so invisible and look-alike characters show in messages. */
    static String show(String k) {
        StringBuilder sb = new StringBuilder("\"");
        int shown = Math.min(k.length(), 80);
        for (int i = 0; i < shown; i++) {
            char c = k.charAt(i);
            if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') sb.append(c);
            else sb.append(String.format("\\u%04x", (int) c));
        }
        if (shown < k.length()) sb.append("…(").append(k.length()).append(" chars)");
        return sb.append('"').toString();
    }
}
