package dev.latchkey.clickhouse;

import static dev.latchkey.clickhouse.ClickHouseTestServer.sql;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.latchkey.Latchkey;
import dev.latchkey.Lease;
import dev.latchkey.LeaseOptions;
import dev.latchkey.LockBackendException;
import dev.latchkey.LockInfo;
import dev.latchkey.LockManager;
import dev.latchkey.UnsupportedLockUriException;
import dev.latchkey.spi.LockUri;
import dev.latchkey.tck.CriticalSectionChecker;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * ClickHouse-specific behaviour beyond the TCK, against the real server: the seed's synchronous
 * reclaim of a dead holder, the TTL backstop, racing managers, and the two traps of a
 * {@code ReplacingMergeTree} lock table (merges collapsing candidates; a heartbeat moving the
 * winner-picking value).
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class ClickHouseLockTest {
    private final List<LockManager> managers = new CopyOnWriteArrayList<>();
    private final String tag = UUID.randomUUID().toString().substring(0, 8);

    @AfterEach
    void close() {
        managers.forEach(LockManager::close);
    }

    /** A fresh table per test, so planted rows and OPTIMIZE never touch another test's locks. */
    private String table(String name) {
        return name + "_" + tag;
    }

    private String uri(String table, String extra) {
        return ClickHouseTestServer.uri("table=" + table + "&settle=150ms&stale=120s" + (extra.isEmpty() ? "" : "&" + extra));
    }

    private LockManager open(String uri) {
        LockManager m = Latchkey.open(uri);
        managers.add(m);
        return m;
    }

    private String qualified(String table) {
        return "`" + ClickHouseTestServer.database() + "`.`" + table + "`";
    }

    private static LeaseOptions lease(String owner) {
        return LeaseOptions.ttl(Duration.ofSeconds(30)).withOwner(owner);
    }

    @Test
    void providerIsFoundByScheme() {
        LockManager m = open(uri(table("locks"), ""));
        assertThat(m).isInstanceOf(ClickHouseLockManager.class);
        assertThat(Latchkey.providers()).containsKey("clickhouse");
    }

    @Test
    void uriIsValidatedBeforeIoAndSecretsAreMasked() {
        ClickHouseSettings s = ClickHouseSettings.from(LockUri.parse(
                "clickhouse://alice:s3cr3t@db.example:8443/analytics?table=locks&ssl=true&settle=250ms&stale=60s&timeout=5s"));
        assertThat(s.masked()).doesNotContain("s3cr3t").doesNotContain("alice").contains("clickhouse://****@db.example");
        assertThat(s.endpoint()).doesNotContain("s3cr3t").startsWith("https://db.example:8443/analytics");
        assertThat(s.settle()).isEqualTo(Duration.ofMillis(250));
        assertThat(ClickHouseSettings.from(LockUri.parse("clickhouse://h")).port()).isEqualTo(8123);
        assertThat(ClickHouseSettings.from(LockUri.parse("clickhouse://h?ssl=true")).port()).isEqualTo(8443);
        assertThat(ClickHouseSettings.from(LockUri.parse("clickhouse://h")).database()).isEqualTo("default");
        assertThatThrownBy(() -> ClickHouseSettings.from(LockUri.parse("clickhouse://h/db?tabel=x")))
                .isInstanceOf(UnsupportedLockUriException.class).hasMessageContaining("tabel");
        assertThatThrownBy(() -> ClickHouseSettings.from(LockUri.parse("clickhouse://h/db?table=x;drop")))
                .isInstanceOf(UnsupportedLockUriException.class);
        assertThatThrownBy(() -> ClickHouseSettings.from(LockUri.parse("clickhouse://u:pw@h/db`x")))
                .isInstanceOf(UnsupportedLockUriException.class).message().doesNotContain("pw@");
        assertThatThrownBy(() -> ClickHouseSettings.from(LockUri.parse("clickhouse://h/db?stale=1500ms")))
                .isInstanceOf(UnsupportedLockUriException.class);
    }

    @Test
    void wrongPasswordIsAClearNonRetriableErrorWithoutTheSecret() {
        LockUri good = LockUri.parse(ClickHouseTestServer.base());
        String bad = "clickhouse://default:wr0ngS3cret@" + good.host() + ":" + good.port().getAsInt() + good.path();
        assertThatThrownBy(() -> open(bad))
                .isInstanceOf(LockBackendException.class)
                .satisfies(e -> assertThat(((LockBackendException) e).isRetriable()).isFalse())
                .message().contains(good.host() + ":" + good.port().getAsInt()).doesNotContain("wr0ngS3cret");
    }

    @Test
    void leaseTtlMustFitTheTableAndTheSettleWindow() {
        LockManager m = open(uri(table("locks"), ""));
        assertThatThrownBy(() -> m.tryAcquire("k", LeaseOptions.ttl(Duration.ofSeconds(121))))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("stale");
        assertThatThrownBy(() -> m.tryAcquire("k", LeaseOptions.ttl(Duration.ofMillis(300))))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("settle");
    }

    @Test
    void aTableWithTheSeedsSortKeyIsRefused() {
        String t = table("seed_schema");
        sql("CREATE TABLE " + qualified(t) + " (state_id String, lock_id String, locked_at DateTime64(6) DEFAULT now64(6)) "
                + "ENGINE = ReplacingMergeTree(locked_at) ORDER BY state_id TTL locked_at + INTERVAL 300 SECOND");
        assertThatThrownBy(() -> open(uri(t, "")))
                .isInstanceOf(LockBackendException.class).hasMessageContaining("ORDER BY state_id");
    }

    /** The seed's own case: a dead holder's row, an hour old, is removed synchronously by the next acquire. */
    @Test
    void deadHolderRowAnHourOldIsReclaimedSynchronously() {
        String t = table("seed_case");
        LockManager m = open(uri(t, ""));
        String key = "meltano:dev:tap-x-to-target-y";
        // TTL merges are lazy in production (merge_with_ttl_timeout is hours): keep them from
        // reaping the planted row first, as the seed's active clean-up exists for exactly that gap.
        sql("SYSTEM STOP TTL MERGES " + qualified(t));
        // Written the way the seed's backend writes a lock row: only state_id, lock_id and locked_at.
        sql("INSERT INTO " + qualified(t) + " (state_id, lock_id, locked_at) VALUES ('" + key
                + "', 'dead-holder', now64(6) - INTERVAL 1 HOUR)");
        assertThat(sql("SELECT count() FROM " + qualified(t) + " WHERE lock_id = 'dead-holder'")).isEqualTo("1");

        Lease lease = m.tryAcquire(key, lease("successor")).orElseThrow();

        assertThat(sql("SELECT count() FROM " + qualified(t) + " WHERE lock_id = 'dead-holder'"))
                .as("dead row deleted during the acquire").isEqualTo("0");
        assertThat(m.inspect(key).map(LockInfo::leaseId)).contains(lease.leaseId());
        lease.release();
        sql("SYSTEM START TTL MERGES " + qualified(t));
    }

    /** A crashed holder whose row is younger than the stale threshold still blocks until its own TTL. */
    @Test
    void seedStyleRowWithinStaleThresholdCountsAsHolder() {
        String t = table("seed_live");
        LockManager m = open(uri(t, ""));
        sql("INSERT INTO " + qualified(t) + " (state_id, lock_id, owner) VALUES ('job', 'seed-holder', 'meltano@host')");
        assertThat(m.tryAcquire("job", lease("me"))).isEmpty();
        assertThat(m.inspect("job").map(LockInfo::owner)).contains("meltano@host");
    }

    /** The passive backstop: the table's TTL really removes rows once merged, live rows stay. */
    @Test
    void ttlBackstopRemovesOldRows() throws Exception {
        String t = table("ttl_backstop");
        LockManager m = open(ClickHouseTestServer.uri("table=" + t + "&settle=100ms&stale=5s"));
        sql("INSERT INTO " + qualified(t) + " (state_id, lock_id, locked_at) VALUES ('old', 'x', now64(6) - INTERVAL 1 MINUTE)");
        Lease live = m.tryAcquire("live", LeaseOptions.ttl(Duration.ofSeconds(4)).withHeartbeat(Duration.ofMillis(250)))
                .orElseThrow();

        sql("OPTIMIZE TABLE " + qualified(t) + " FINAL");
        assertThat(sql("SELECT count() FROM " + qualified(t) + " WHERE state_id = 'old'")).isEqualTo("0");
        assertThat(m.inspect("live").map(LockInfo::leaseId)).as("a heartbeating lease survives the TTL merge")
                .contains(live.leaseId());

        live.release();
        // Every row of the released lease passes the table's TTL five seconds after its last write.
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        String left;
        do {
            sql("OPTIMIZE TABLE " + qualified(t) + " FINAL");
            left = sql("SELECT count() FROM " + qualified(t));
        } while (!left.equals("0") && System.nanoTime() < deadline && pause(200));
        assertThat(left).as("rows left after the TTL merge").isEqualTo("0");
    }

    /**
     * 8 managers race one key for 50 rounds: never two holders at once, tokens rise, every round has
     * a winner. Also with a 10 ms settle window: on one server the winner is picked by commit order,
     * so safety does not rest on the settle window (see the ClickHouse section of the README).
     */
    @ParameterizedTest(name = "settle {0}")
    @ValueSource(strings = {"200ms", "10ms"})
    void eightManagersRacingFiftyRounds(String settle) throws Exception {
        String t = table("race");
        String uri = ClickHouseTestServer.uri("table=" + t + "&settle=" + settle + "&stale=120s");
        int racers = 8;
        int rounds = 50;
        List<LockManager> ms = new ArrayList<>();
        for (int i = 0; i < racers; i++) ms.add(open(uri));
        String key = "race/" + tag + "/" + settle;
        CriticalSectionChecker checker = new CriticalSectionChecker();
        AtomicInteger[] winnersPerRound = new AtomicInteger[rounds];
        for (int r = 0; r < rounds; r++) winnersPerRound[r] = new AtomicInteger();
        CyclicBarrier barrier = new CyclicBarrier(racers);

        runAll(racers, i -> {
            for (int r = 0; r < rounds; r++) {
                barrier.await(2, TimeUnit.MINUTES);
                Optional<Lease> lease = ms.get(i).tryAcquire(key, lease("racer-" + i));
                if (lease.isPresent()) {
                    winnersPerRound[r].incrementAndGet();
                    checker.enter(lease.get().fencingToken());
                    try {
                        checker.work();
                        pause(20); // hold the lock a little, so that a second holder would overlap
                    } finally {
                        checker.exit();
                    }
                    lease.get().release();
                }
            }
        });

        assertThat(checker.overlaps()).as(checker.summary()).isZero();
        assertThat(checker.counter()).isEqualTo(checker.sections());
        assertThat(checker.tokenOrderViolations()).isEmpty();
        for (int r = 0; r < rounds; r++) {
            assertThat(winnersPerRound[r].get()).as("winners in round %d", r).isGreaterThanOrEqualTo(1);
        }
    }

    /**
     * Trap 1: a ReplacingMergeTree collapses rows with equal sorting key in FINAL and in merges at
     * any moment. With the seed's {@code ORDER BY state_id} two candidates of a key collapse into one;
     * with {@code ORDER BY (state_id, lock_id)} both survive, so the verify step sees every candidate.
     */
    @Test
    void mergesNeverCollapseCompetingCandidates() {
        String seed = table("seed_merge");
        sql("CREATE TABLE " + qualified(seed) + " (state_id String, lock_id String, locked_at DateTime64(6) DEFAULT now64(6)) "
                + "ENGINE = ReplacingMergeTree(locked_at) ORDER BY state_id");
        sql("INSERT INTO " + qualified(seed) + " (state_id, lock_id) VALUES ('k', 'a')");
        sql("INSERT INTO " + qualified(seed) + " (state_id, lock_id) VALUES ('k', 'b')");
        sql("OPTIMIZE TABLE " + qualified(seed) + " FINAL");
        assertThat(sql("SELECT count() FROM " + qualified(seed))).as("the seed's schema after a merge").isEqualTo("1");

        String t = table("merge");
        LockManager m = open(uri(t, ""));
        sql("INSERT INTO " + qualified(t) + " (state_id, lock_id, acquired_at, locked_at, ttl_ms, token, owner) VALUES "
                + "('k', 'first', now64(6), now64(6), 60000, 1, 'first')");
        sql("INSERT INTO " + qualified(t) + " (state_id, lock_id, acquired_at, locked_at, ttl_ms, token, owner) VALUES "
                + "('k', 'second', now64(6) + INTERVAL 1 MILLISECOND, now64(6) + INTERVAL 1 SECOND, 60000, 2, 'second')");
        sql("OPTIMIZE TABLE " + qualified(t) + " FINAL");
        assertThat(sql("SELECT count() FROM " + qualified(t) + " WHERE state_id = 'k'")).as("candidates after a merge").isEqualTo("2");
        assertThat(m.inspect("k").map(LockInfo::leaseId)).as("the earliest candidate still wins").contains("first");
    }

    /** Trap 1 under fire: racing managers while OPTIMIZE … FINAL runs continuously never yield two holders. */
    @Test
    void racingWhileOptimizeFinalRunsKeepsOneHolder() throws Exception {
        String t = table("optimize_race");
        String uri = ClickHouseTestServer.uri("table=" + t + "&settle=200ms&stale=120s");
        List<LockManager> ms = new ArrayList<>();
        for (int i = 0; i < 4; i++) ms.add(open(uri));
        String key = "optimize/" + tag;
        CriticalSectionChecker checker = new CriticalSectionChecker();
        AtomicBoolean done = new AtomicBoolean();
        AtomicInteger merges = new AtomicInteger();
        ExecutorService merger = Executors.newSingleThreadExecutor();
        Future<?> merging = merger.submit(() -> {
            while (!done.get()) {
                sql(uri, "OPTIMIZE TABLE " + qualified(t) + " FINAL");
                merges.incrementAndGet();
            }
            return null;
        });
        try {
            runAll(4, i -> {
                for (int r = 0; r < 8; r++) {
                    Lease lease = ms.get(i).acquire(key, Duration.ofMinutes(2), lease("racer-" + i));
                    checker.enter(lease.fencingToken());
                    try {
                        checker.work();
                        pause(20);
                    } finally {
                        checker.exit();
                    }
                    lease.release();
                }
            });
        } finally {
            done.set(true);
            merging.get(1, TimeUnit.MINUTES);
            merger.shutdownNow();
        }
        assertThat(merges.get()).isPositive();
        assertThat(checker.sections()).isEqualTo(32);
        assertThat(checker.overlaps()).as(checker.summary()).isZero();
        assertThat(checker.counter()).isEqualTo(32);
        assertThat(checker.tokenOrderViolations()).isEmpty();
    }

    /**
     * Trap 2: heartbeats refresh {@code locked_at} but never {@code acquired_at}, which picks the
     * winner; so heartbeats during a contender's settle window cannot hand the lock over.
     */
    @Test
    void heartbeatsDuringAContendersSettleDoNotHandOver() throws Exception {
        String t = table("heartbeat_trap");
        LockManager holderManager = open(uri(t, ""));
        // A contender with a long settle window, so that many heartbeats land inside it.
        LockManager contender = open(ClickHouseTestServer.uri("table=" + t + "&settle=1s&stale=120s"));
        Lease held = holderManager.tryAcquire("job", LeaseOptions.ttl(Duration.ofSeconds(10))
                .withHeartbeat(Duration.ofMillis(50)).withOwner("holder")).orElseThrow();
        LockInfo before = holderManager.inspect("job").orElseThrow();
        Instant acquiredAt = before.acquiredAt();

        // A candidate that slipped in (inserted after the holder): its settle spans many heartbeats.
        sql("INSERT INTO " + qualified(t) + " (state_id, lock_id, acquired_at, locked_at, ttl_ms, token, owner) VALUES "
                + "('job', '00000000-contender', now64(6), now64(6), 60000, 0, 'planted')");
        for (int i = 0; i < 3; i++) {
            assertThat(contender.tryAcquire("job", lease("contender-" + i))).as("contender round %d", i).isEmpty();
            held.renew();
        }
        assertThat(held.isValid()).isTrue();
        LockInfo now = contender.inspect("job").orElseThrow();
        assertThat(now.leaseId()).isEqualTo(held.leaseId());
        assertThat(now.acquiredAt()).as("acquired_at after heartbeats").isEqualTo(acquiredAt);
        assertThat(now.expiresAt()).as("server expiry after heartbeats (they refresh locked_at)").isAfter(before.expiresAt());
        assertThat(sql("SELECT uniqExact(acquired_at) FROM " + qualified(t) + " WHERE lock_id = '" + held.leaseId() + "'"))
                .isEqualTo("1");
        held.release();
    }

    @Test
    void hostileKeysAreBoundNotSpliced() {
        LockManager m = open(uri(table("locks"), ""));
        for (String key : List.of("it's", "back\\slash", "a\\nb", "trailing\\", "q\\'\\\"", "{key:String}", "a' OR 1=1 --", "\u00e9t\u00e9/\ud83d\udd12", "%_")) {
            Lease lease = m.tryAcquire(key, lease("hostile")).orElseThrow(() -> new AssertionError(key));
            assertThat(m.inspect(key).map(LockInfo::key)).as(key).contains(key);
            assertThat(m.list(key).stream().map(LockInfo::key)).as(key).containsExactly(key);
            lease.release();
            assertThat(m.inspect(key)).as(key).isEmpty();
        }
    }

    // ---------------------------------------------------------------- helpers

    private static boolean pause(long millis) throws InterruptedException {
        Thread.sleep(millis);
        return true;
    }

    private interface Body {
        void run(int index) throws Exception;
    }

    private static void runAll(int threads, Body body) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<Future<?>> fs = new ArrayList<>();
            for (int i = 0; i < threads; i++) {
                int index = i;
                fs.add(pool.submit(() -> {
                    body.run(index);
                    return null;
                }));
            }
            for (Future<?> f : fs) f.get(4, TimeUnit.MINUTES);
        } finally {
            pool.shutdownNow();
        }
    }
}
