package dev.latchkey.tck;

import static org.assertj.core.api.Assertions.assertThat;

import dev.latchkey.spi.ConditionalStore;
import dev.latchkey.spi.StoredRecord;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The contract of the compare-and-swap primitive ({@link ConditionalStore}) under the lease
 * engine. A store proves itself by subclassing this and implementing {@link #newStore()}: an
 * independent client (own connections) on the same backing store each time.
 *
 * <p><b>What is checked</b>: read, create, replace and delete semantics with stale versions; that
 * no name is ever given a version twice (writes back to back until a store stamping versions with a
 * millisecond clock must have repeated one, by two clients in turn, across deletes); and
 * the one rule everything rests on, raced for real: of {@link #raceThreads()} clients creating one
 * absent name at the same instant exactly one wins, and of the same clients replacing one record
 * expecting the same version exactly one wins — every round of {@link #raceRounds()}; and of a
 * delete and a replace racing on one version exactly one wins, the delete never removing the
 * record the replace wrote (a look before an unconditional delete passes every sequential check and
 * fails this). Several S3 emulators fail these; a lock built on them would let two holders in.
 *
 * <p>Every write carries distinct bytes: stores whose version is a content hash (S3 ETags) only
 * promise a new version for new content, and the lease engine never writes the same record twice.
 * Names are unique per test ({@code [a-z0-9_~-]}, as {@code LockNames} makes them). The default
 * volume is about 3,200 write attempts per run, plus at most a second of back-to-back writes to
 * one name (32 paced writes on a store with a minimum write interval); lower the hooks for a store
 * that suffers under many overwrites.
 */
@Timeout(value = 10, unit = TimeUnit.MINUTES)
public abstract class ConditionalStoreContract {
    /** Writes to one name between deletes in {@link #versionsOfANameNeverRepeat} (the last is the delete). */
    private static final int FAST_CYCLE = 8;
    /** Names written in {@link #versionsOfANameNeverRepeat} on a store with a minimum write interval. */
    private static final int PACED_NAMES = 8;
    /** The longest {@link #versionsOfANameNeverRepeat} writes one name back to back. */
    private static final Duration FAST_BUDGET = Duration.ofSeconds(1);

    private final List<ConditionalStore> stores = new CopyOnWriteArrayList<>();
    private final String tag = "tck-cas-" + UUID.randomUUID().toString().substring(0, 8);

    /** A fresh, independent client of the store under test; closed after the test. */
    protected abstract ConditionalStore newStore() throws Exception;

    /** Rounds of each race. Default 200. */
    protected int raceRounds() {
        return 200;
    }

    /**
     * Whether {@link ConditionalStore#awaitChange} returns early when another client writes the
     * record (the backend declares {@code NATIVE_WAIT}). Default false: it may just wait out its bound.
     */
    protected boolean wakesOnChange() {
        return false;
    }

    /** Clients racing in each round, each with its own store client and thread. Default 8. */
    protected int raceThreads() {
        return 8;
    }

    @AfterEach
    void closeStores() {
        RuntimeException first = null;
        for (ConditionalStore s : stores) {
            try {
                s.close();
            } catch (RuntimeException e) {
                if (first == null) first = e;
            }
        }
        stores.clear();
        if (first != null) throw first;
    }

    @Test
    void createReadReplaceDelete() throws Exception {
        ConditionalStore s = store();
        ConditionalStore other = store();
        String n = name("basic");
        byte[] d1 = bytes("first");
        byte[] d2 = bytes("second");
        byte[] d3 = bytes("third");

        assertThat(s.read(n)).as("read of a missing name").isEmpty();
        String v1 = s.create(n, d1).orElseThrow(() -> new AssertionError("create of a missing name failed"));
        assertThat(other.create(n, d2)).as("create on an existing name").isEmpty();
        StoredRecord r1 = other.read(n).orElseThrow(() -> new AssertionError("created record not readable"));
        assertThat(r1.data()).isEqualTo(d1);
        assertThat(r1.version()).isEqualTo(v1);

        String v2 = other.replace(n, v1, d2).orElseThrow(() -> new AssertionError("replace with the current version failed"));
        assertThat(v2).as("version after replace").isNotEqualTo(v1);
        assertThat(s.replace(n, v1, d3)).as("replace with a stale version").isEmpty();
        assertThat(s.read(n).map(StoredRecord::data)).as("data after a refused replace").contains(d2);
        assertThat(s.delete(n, v1)).as("delete with a stale version").isFalse();
        assertThat(s.read(n).map(StoredRecord::version)).contains(v2);

        String v3 = s.replace(n, v2, d3).orElseThrow(() -> new AssertionError("second replace failed"));
        assertThat(new HashSet<>(List.of(v1, v2, v3))).as("versions of three writes").hasSize(3);
        assertThat(other.delete(n, v3)).as("delete with the current version").isTrue();
        assertThat(s.read(n)).as("read after delete").isEmpty();
        assertThat(s.delete(n, v3)).as("delete of a missing name").isFalse();
        assertThat(s.replace(n, v3, d1)).as("replace of a missing name").isEmpty();

        // a store whose versions restart after a delete (a counter per name) would match old versions again
        byte[] d4 = bytes("fourth, after delete");
        String v4 = s.create(n, d4).orElseThrow(() -> new AssertionError("create after delete failed"));
        assertThat(List.of(v1, v2, v3)).as("version of the re-created record, against every version from before the delete").doesNotContain(v4);
        for (String old : List.of(v1, v2, v3)) {
            assertThat(s.replace(n, old, bytes("stale write with " + old))).as("replace with %s, a version from before the delete", old)
                    .isEmpty();
            assertThat(s.delete(n, old)).as("delete with %s, a version from before the delete", old).isFalse();
        }
        assertThat(s.read(n).map(StoredRecord::version)).contains(v4);
        assertThat(s.read(n).map(StoredRecord::data)).contains(d4);
    }

    /**
     * A version is never given twice to one name — not by later replaces, not after a delete and
     * re-create, not by another client: a repeated version would let a stale holder's replace or
     * delete land. Two clients take turns on each name (versions counted per client repeat at once).
     * On a store without a {@linkplain ConditionalStore#minWriteInterval() minimum write interval}
     * one name is written back to back (creates, replaces, a delete every {@value #FAST_CYCLE} writes)
     * until {@value VersionHistory#WINDOW} versions were given within
     * {@value VersionHistory#WINDOW_SPAN_MILLIS} ms, so that versions stamped by a millisecond (or
     * coarser) clock must have repeated, or for at most {@link #FAST_BUDGET}; otherwise
     * {@value #PACED_NAMES} names get create, replace, delete, create, spaced by that interval.
     */
    @Test
    void versionsOfANameNeverRepeat() throws Exception {
        List<ConditionalStore> clients = List.of(store(), store());
        Duration interval = clients.get(0).minWriteInterval();
        boolean paced = !interval.isZero() && !interval.isNegative();
        int cycle = paced ? 3 : FAST_CYCLE;
        List<VersionHistory> histories = new ArrayList<>();
        for (int i = 0; i < (paced ? PACED_NAMES : 1); i++) histories.add(new VersionHistory(name("versions-" + i)));
        String[] current = new String[histories.size()];
        long start = System.nanoTime();
        for (int step = 0; ; step++) {
            int client = step % 2;
            for (int i = 0; i < histories.size(); i++) {
                current[i] = write(clients.get(client), client, histories.get(i), current[i], step, cycle);
            }
            boolean cycled = step >= cycle; // at least one re-create after a delete
            if (paced ? cycled : cycled && (histories.get(0).millisecondClockMustHaveRepeated()
                    || System.nanoTime() - start >= FAST_BUDGET.toNanos())) break;
            TckFixture.pace(interval);
        }
        List<String> repeats = new ArrayList<>();
        for (VersionHistory h : histories) repeats.addAll(h.repeats());
        TckFixture.assertNone(repeats, "versions given twice to one name (the SPI forbids it: a stale version would match"
                + " again; use a counter stored with the record, a random token or the store's generation/ETag —"
                + " not a timestamp, nor a counter per client or one that restarts)");
    }

    /**
     * Write number {@code step} of a name by one client: a create at the cycle's first phase, a delete
     * at its last, a replace of the current version in between; returns the version now current.
     */
    private static String write(ConditionalStore s, int client, VersionHistory h, String current, int step, int cycle) {
        String n = h.name();
        int phase = step % cycle;
        if (phase == cycle - 1) {
            assertThat(s.delete(n, current)).as("delete with the current version by client %d, write #%d of %s",
                    client, step, TckFixture.show(n)).isTrue();
            return null;
        }
        byte[] data = bytes(n + ";step=" + step);
        long sent = System.nanoTime();
        Optional<String> v = phase == 0 ? s.create(n, data) : s.replace(n, current, data);
        long returned = System.nanoTime();
        String what = "write #" + step + " (" + (phase == 0 ? "create" : "replace") + " by client " + client + ")";
        h.add(v.orElseThrow(() -> new AssertionError(what + " of " + TckFixture.show(n) + " refused"
                + (phase == 0 ? ": the name was absent" : ": it expected the current version"))), what, sent, returned);
        return v.get();
    }

    @Test
    void dataIsBinarySafe() throws Exception {
        ConditionalStore s = store();
        String n = name("binary");
        byte[] all = new byte[256 * 4];
        for (int i = 0; i < all.length; i++) all[i] = (byte) i;
        s.create(n, all).orElseThrow(() -> new AssertionError("create failed"));
        assertThat(store().read(n).map(StoredRecord::data)).contains(all);
    }

    @Test
    void listByNamePrefix() throws Exception {
        ConditionalStore s = store();
        String p = name("list-");
        s.create(p + "a", bytes("a")).orElseThrow(() -> new AssertionError("create failed"));
        String vb = s.create(p + "b", bytes("b")).orElseThrow(() -> new AssertionError("create failed"));
        s.create(name("lis"), bytes("decoy")).orElseThrow(() -> new AssertionError("create failed"));

        assertThat(store().list(p)).containsExactlyInAnyOrder(p + "a", p + "b");
        assertThat(s.delete(p + "b", vb)).isTrue();
        assertThat(store().list(p)).containsExactly(p + "a");
    }

    @Test
    void awaitChangeReturnsWithinItsBound() throws Exception {
        ConditionalStore s = store();
        String n = name("await");
        String v = s.create(n, bytes("x")).orElseThrow(() -> new AssertionError("create failed"));
        Duration max = Duration.ofMillis(200);
        long start = System.nanoTime();
        s.awaitChange(n, v, max);
        // returning early is allowed ("may have changed"); overstaying its bound by seconds is not
        assertThat(Duration.ofNanos(System.nanoTime() - start)).as("awaitChange(%s) on an unchanged record", max)
                .isLessThan(max.plus(Duration.ofSeconds(10)));
    }

    @Test
    void anotherClientsWriteWakesALongAwaitChange() throws Exception {
        Assumptions.assumeTrue(wakesOnChange(),
                "wakesOnChange() is false: this store's awaitChange only waits out its bound");
        ConditionalStore waiter = store();
        ConditionalStore writer = store();
        String n = name("wake");
        String v = writer.create(n, bytes("before")).orElseThrow(() -> new AssertionError("create failed"));
        CountDownLatch waiting = new CountDownLatch(1);
        ExecutorService one = Executors.newSingleThreadExecutor();
        try {
            Future<Long> returned = one.submit(() -> {
                waiting.countDown();
                waiter.awaitChange(n, v, Duration.ofMinutes(5));
                return System.nanoTime();
            });
            assertThat(waiting.await(30, TimeUnit.SECONDS)).isTrue();
            long wrote = System.nanoTime();
            writer.replace(n, v, bytes("after")).orElseThrow(() -> new AssertionError("replace failed"));
            long back = returned.get(60, TimeUnit.SECONDS);
            assertThat(Duration.ofNanos(back - wrote)).as("a 5-minute awaitChange after another client's write")
                    .isLessThan(Duration.ofSeconds(60));
        } finally {
            one.shutdownNow();
        }
    }

    @Test
    void racingCreatesHaveExactlyOneWinner() throws Exception {
        List<ConditionalStore> clients = clients();
        int threads = clients.size();
        List<String> failures = new ArrayList<>();
        String base = name("create-race-");
        race(threads, raceRounds(), (round, i) -> () -> clients.get(i).create(base + round, payload(round, i)),
                (round, versions) -> {
                    int winner = onlyWinner(versions);
                    if (winner < 0) {
                        failures.add("round " + round + ": " + winners(versions) + " creators won");
                        return;
                    }
                    verifyRecord(clients.get((winner + 1) % threads), base + round, versions.get(winner),
                            payload(round, winner), round, failures);
                });
        TckFixture.assertNone(failures, "rounds of " + threads + " racing creates that did not have exactly one winner"
                + " (of " + raceRounds() + "; create must be atomic: if-absent in one request)");
    }

    @Test
    void racingReplacesOfOneVersionHaveExactlyOneWinner() throws Exception {
        List<ConditionalStore> clients = clients();
        int threads = clients.size();
        String n = name("replace-race");
        clients.get(0).create(n, bytes("start")).orElseThrow(() -> new AssertionError("create failed"));
        List<String> failures = new ArrayList<>();
        ReentrantLock seenLock = new ReentrantLock();
        List<Set<String>> seenPerRound = new ArrayList<>(); // written under seenLock; judged after the round's futures
        race(threads, raceRounds(), (round, i) -> {
            // every client reads for itself before the barrier; nothing writes until all have read
            StoredRecord seen = clients.get(i).read(n).orElseThrow(() -> new AssertionError("record vanished"));
            seenLock.lock();
            try {
                while (seenPerRound.size() <= round) seenPerRound.add(new HashSet<>());
                seenPerRound.get(round).add(seen.version());
            } finally {
                seenLock.unlock();
            }
            return () -> clients.get(i).replace(n, seen.version(), payload(round, i));
        }, (round, versions) -> {
            if (seenPerRound.get(round).size() != 1) {
                failures.add("round " + round + ": clients read different versions with no write in between: "
                        + seenPerRound.get(round));
                return;
            }
            int winner = onlyWinner(versions);
            if (winner < 0) {
                failures.add("round " + round + ": " + winners(versions) + " replacers won");
                return;
            }
            verifyRecord(clients.get((winner + 1) % threads), n, versions.get(winner),
                    payload(round, winner), round, failures);
        });
        TckFixture.assertNone(failures, "rounds of " + threads + " racing replaces that did not have exactly one winner"
                + " (of " + raceRounds() + "; replace must be atomic: if-version-matches in one request)");
    }

    /**
     * A delete and a replace, both expecting the version just written, race on one record: exactly
     * one wins, and the record then is what that one left — the replacer's record if the replace
     * won, nothing if the delete won. A store that looks before it deletes (a read, then a delete
     * whose condition the server ignores or that carries none) passes every sequential test, since
     * the look refuses a stale version; here the replace lands between look and delete, and the
     * delete removes a record it never saw. Only the server's own check-and-delete in one step can
     * pass this. A quarter of {@link #raceRounds()} (at least 10): two writers per round, and each
     * round needs a record of its own.
     */
    @Test
    void racingDeleteNeverRemovesAReplacedRecord() throws Exception {
        ConditionalStore deleter = store();
        ConditionalStore replacer = store();
        String base = name("delete-race-");
        // every round's record exists before the races, so a round's two writers only race each other
        int rounds = Math.max(10, raceRounds() / 4);
        String[] created = new String[rounds];
        for (int round = 0; round < created.length; round++) {
            int r = round;
            created[round] = deleter.create(base + round, bytes("start " + round))
                    .orElseThrow(() -> new AssertionError("create of " + TckFixture.show(base + r) + " failed"));
        }
        List<String> failures = new ArrayList<>();
        race(2, rounds, (round, i) -> i == 0
                ? () -> deleter.delete(base + round, created[round]) ? Optional.of("deleted") : Optional.empty()
                : () -> replacer.replace(base + round, created[round], payload(round, i)),
                (round, outcome) -> {
                    boolean deleted = outcome.get(0).isPresent();
                    Optional<String> replaced = outcome.get(1);
                    Optional<StoredRecord> after = replacer.read(base + round);
                    if (deleted && replaced.isPresent()) {
                        failures.add("round " + round + ": both won; the record is "
                                + (after.isEmpty() ? "gone: the delete removed the replaced record" : "version " + after.get().version()));
                    } else if (replaced.isPresent()) {
                        verifyRecord(replacer, base + round, replaced, payload(round, 1), round, failures);
                    } else if (deleted) {
                        after.ifPresent(r -> failures.add("round " + round + ": the delete won but a record is there, version "
                                + r.version()));
                    } else {
                        failures.add("round " + round + ": neither won");
                    }
                });
        TckFixture.assertNone(failures, "rounds of a delete racing a replace of one version that did not have exactly one"
                + " winner or left another's record (of " + rounds + "; delete must be atomic: if-version-matches in one"
                + " request, the server's check, not a look first)");
    }

    // ---------------------------------------------------------------- helpers

    /** Prepares one client's attempt (before the barrier) and returns the write to race (after it). */
    private interface Attempt {
        Callable<Optional<String>> prepare(int round, int client) throws Exception;
    }

    private interface Verdict {
        void judge(int round, List<Optional<String>> versions);
    }

    /**
     * Runs {@code rounds} rounds; in each, {@code threads} threads prepare, wait at a barrier and
     * then all write at once. The verdict sees every thread's result before the next round starts.
     */
    private static void race(int threads, int rounds, Attempt attempt, Verdict verdict) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        CyclicBarrier barrier = new CyclicBarrier(threads);
        try {
            for (int round = 0; round < rounds; round++) {
                int r = round;
                List<Future<Optional<String>>> results = new ArrayList<>();
                for (int i = 0; i < threads; i++) {
                    int client = i;
                    results.add(pool.submit(() -> {
                        Callable<Optional<String>> write = attempt.prepare(r, client);
                        barrier.await(60, TimeUnit.SECONDS);
                        return write.call();
                    }));
                }
                List<Optional<String>> versions = new ArrayList<>();
                for (Future<Optional<String>> f : results) {
                    try {
                        versions.add(f.get(120, TimeUnit.SECONDS));
                    } catch (ExecutionException e) {
                        if (e.getCause() instanceof Exception) throw (Exception) e.getCause();
                        if (e.getCause() instanceof Error) throw (Error) e.getCause();
                        throw e;
                    }
                }
                verdict.judge(r, versions);
            }
        } finally {
            pool.shutdownNow();
        }
    }

    private static int winners(List<Optional<String>> versions) {
        return (int) versions.stream().filter(Optional::isPresent).count();
    }

    /** Index of the only successful attempt, or -1 if there were none or several. */
    private static int onlyWinner(List<Optional<String>> versions) {
        if (winners(versions) != 1) return -1;
        for (int i = 0; i < versions.size(); i++) if (versions.get(i).isPresent()) return i;
        return -1;
    }

    private static void verifyRecord(ConditionalStore reader, String n, Optional<String> version, byte[] data,
                                     int round, List<String> failures) {
        Optional<StoredRecord> r = reader.read(n);
        if (r.isEmpty()) {
            failures.add("round " + round + ": record missing after the race");
        } else if (!r.get().version().equals(version.orElseThrow())) {
            failures.add("round " + round + ": stored version " + r.get().version() + " is not the winner's " + version.get());
        } else if (!Arrays.equals(r.get().data(), data)) {
            failures.add("round " + round + ": stored data is not the winner's");
        }
    }

    private List<ConditionalStore> clients() throws Exception {
        List<ConditionalStore> clients = new ArrayList<>();
        for (int i = 0; i < raceThreads(); i++) clients.add(store());
        return clients;
    }

    private ConditionalStore store() throws Exception {
        ConditionalStore s = newStore();
        assertThat(s).as("newStore returned null").isNotNull();
        stores.add(s);
        return s;
    }

    /** A unique, LockNames-safe name for this test. */
    private String name(String what) {
        return tag + "-" + what;
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static byte[] payload(int round, int client) {
        return bytes("round=" + round + ";client=" + client);
    }
}
