package dev.latchkey.postgres.shared;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.latchkey.bench.Baseline;
import dev.latchkey.bench.LockBench;
import dev.latchkey.postgres.PostgresLockProvider;
import dev.latchkey.spi.LockUri;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@code latchkey bench} against the real server: the three floors are found for both schemes and
 * measured beside the backend in the same run, the advisory floor with its handoff, and under
 * contention the floors of each mode. Rows, counts
 * and labels only: nothing here asserts a timing.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class PgBenchTest {
    private static final String SELECT_ONE = "floor: SELECT 1";
    private static final String ADVISORY = "floor: pg_try_advisory_lock + pg_advisory_unlock";
    private static final String COMMITS = "floor: two single-row durable commits";

    @Test
    void floorsAreInstalledForBothSchemes() {
        for (String scheme : new PostgresLockProvider().schemes()) {
            List<Baseline> floors = Baseline.forScheme(scheme);
            assertThat(floors).extracting(Baseline::description).contains("SELECT 1",
                    "pg_try_advisory_lock + pg_advisory_unlock", "two single-row durable commits");
            assertThat(floors).filteredOn(b -> b.getClass().getEnclosingClass() == PgBaselines.class)
                    .hasSize(3)
                    .allMatch(b -> b.kind() == Baseline.Kind.FLOOR)
                    .filteredOn(Baseline::hasHandoff).extracting(Baseline::description)
                    .containsExactly("pg_try_advisory_lock + pg_advisory_unlock");
        }
        assertThat(Baseline.forScheme("mem")).noneMatch(b -> b.getClass().getEnclosingClass() == PgBaselines.class);
    }

    @Test
    void eachFloorSpreadsBesideTheModesItIsTheFloorOf() {
        LockUri advisory = LockUri.parse(PgTestSupport.with(PgTestSupport.uri(), "mode=advisory"));
        LockUri lease = LockUri.parse(PgTestSupport.with(PgTestSupport.uri(), PgTestSupport.LEASE));
        assertThat(new PgBaselines.AdvisoryLock().hasSpread(advisory)).isTrue();
        assertThat(new PgBaselines.AdvisoryLock().hasSpread(lease)).isTrue();
        assertThat(new PgBaselines.TwoDurableCommits().hasSpread(lease)).isTrue();
        assertThat(new PgBaselines.TwoDurableCommits().hasSpread(advisory)).isFalse();
        assertThat(new PgBaselines.SelectOne().hasSpread(advisory)).isFalse();
        assertThat(new PgBaselines.SelectOne().hasSpread(lease)).isFalse();
    }

    @Test
    @SuppressWarnings("try") // Baseline.Session.close() throws Exception
    void commitsFloorSessionsShareOneTableAndFindAClaimedRowBusyWithoutWaitingForIt() throws Exception {
        LockUri uri = LockUri.parse(PgTestSupport.with(PgTestSupport.uri(), PgTestSupport.LEASE));
        PgBaselines.TwoDurableCommits floor = new PgBaselines.TwoDurableCommits();
        try (Connection admin = PgTestSupport.jdbc(PgTestSupport.uri())) {
            Set<String> before = floorTables(admin);
            String table;
            try (Baseline.Session a = floor.open(uri); Baseline.Session b = floor.open(uri)) {
                Set<String> ours = new HashSet<>(floorTables(admin));
                ours.removeAll(before);
                assertThat(ours).as("one table for both sessions").hasSize(1);
                table = "latchkey_lease.\"" + ours.iterator().next() + "\"";
                assertThat(a.tryRound(3)).as("key 3's first round inserts its row").isTrue();
                assertThat(b.tryRound(3)).isTrue();
                assertThat(query(admin, "SELECT v FROM " + table + " WHERE id = 3")).as("insert, then three updates").isEqualTo(3);

                // a's next round on key 3 waits in its UPDATE behind a row lock taken here, holding its claim
                admin.setAutoCommit(false);
                query(admin, "SELECT count(*) FROM (SELECT 1 FROM " + table + " WHERE id = 3 FOR UPDATE) locked");
                CompletableFuture<Boolean> blocked = CompletableFuture.supplyAsync(() -> {
                    try {
                        return a.tryRound(3);
                    } catch (Exception e) {
                        throw new IllegalStateException(e);
                    }
                });
                try (Connection watcher = PgTestSupport.jdbc(PgTestSupport.uri())) {
                    String waiting = "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
                            + " AND query LIKE 'UPDATE %latchkey_bench_floor_%'";
                    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
                    while (query(watcher, waiting) == 0) {
                        assertThat(System.nanoTime()).as("a waits for the row lock").isLessThan(deadline);
                        TimeUnit.MILLISECONDS.sleep(10); // pacing between polls of server state
                    }
                }
                // b finds key 3 busy at once rather than queueing behind a on the row
                assertThat(CompletableFuture.supplyAsync(() -> {
                    try {
                        return b.tryRound(3);
                    } catch (Exception e) {
                        throw new IllegalStateException(e);
                    }
                }).get(30, TimeUnit.SECONDS)).as("key 3 while a's round holds it").isFalse();
                assertThat(b.tryRound(4)).as("another key").isTrue();
                assertThat(blocked).isNotDone();
                admin.commit();
                admin.setAutoCommit(true);
                assertThat(blocked.get(30, TimeUnit.SECONDS)).isTrue();
                assertThat(b.tryRound(3)).as("key 3 once a's round ended").isTrue();
                assertThat(query(admin, "SELECT v FROM " + table + " WHERE id = 3")).isEqualTo(7);

                a.close();
                assertThat(floorTables(admin)).as("b still uses the table").containsAll(ours);
            }
            assertThat(floorTables(admin)).as("the last session dropped it").isEqualTo(before);
        }
    }

    @Test
    void commitsFloorUpdatesItsOwnTableAndDropsItOnClose() throws Exception {
        LockUri uri = LockUri.parse(PgTestSupport.uri());
        try (Connection admin = PgTestSupport.jdbc(PgTestSupport.uri())) {
            Set<String> before = floorTables(admin);
            String table;
            try (Baseline.Session s = new PgBaselines.TwoDurableCommits().open(uri)) {
                Set<String> mine = new HashSet<>(floorTables(admin));
                mine.removeAll(before);
                assertThat(mine).hasSize(1);
                table = mine.iterator().next();
                s.acquire();
                s.release();
                assertThat(query(admin, "SELECT v FROM \"" + table + "\" WHERE id = -1")).as("two committed updates").isEqualTo(2);
                s.close(); // idempotent: try-with-resources closes again
            }
            assertThat(floorTables(admin)).doesNotContain(table);
        }
    }

    @Test
    void advisoryFloorSessionsOfOneObjectShareOneLockAndHandItOff() throws Exception {
        LockUri uri = LockUri.parse(PgTestSupport.uri());
        PgBaselines.AdvisoryLock floor = new PgBaselines.AdvisoryLock();
        try (Connection admin = PgTestSupport.jdbc(PgTestSupport.uri());
             Baseline.Session a = floor.open(uri);
             Baseline.Session b = floor.open(uri)) {
            a.acquire();
            assertThatThrownBy(b::acquire).hasMessageContaining("unexpectedly held");
            CompletableFuture<Void> waiter = CompletableFuture.runAsync(() -> {
                try {
                    b.acquireWaiting();
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
            // b is queued in the server behind a before a lets go
            String waiting = "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted"
                    + " AND ((classid::int8 << 32) | objid::int8) = " + floor.id;
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (query(admin, waiting) == 0) {
                assertThat(System.nanoTime()).as("b waits in pg_advisory_lock").isLessThan(deadline);
                TimeUnit.MILLISECONDS.sleep(10); // pacing between polls of server state
            }
            assertThat(waiter).isNotDone();
            a.release();
            waiter.get(30, TimeUnit.SECONDS);
            b.release();
            a.acquire();
            a.release();
        }
        assertThat(new PgBaselines.AdvisoryLock().id).as("a fresh id per floor object").isNotEqualTo(floor.id);
    }

    private static Set<String> floorTables(Connection admin) throws Exception {
        Set<String> names = new HashSet<>();
        try (Statement st = admin.createStatement();
             ResultSet rs = st.executeQuery("SELECT tablename FROM pg_tables WHERE tablename LIKE 'latchkey\\_bench\\_floor\\_%'")) {
            while (rs.next()) names.add(rs.getString(1));
        }
        return names;
    }

    private static long query(Connection admin, String sql) throws Exception {
        try (Statement st = admin.createStatement(); ResultSet rs = st.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"mode=advisory", PgTestSupport.LEASE})
    void benchPrintsTheFloorsBesideTheBackend(String mode) throws Exception {
        String uri = PgTestSupport.with(PgTestSupport.uri(), mode);
        StringWriter text = new StringWriter();
        List<LockBench.Row> rows;
        try (PrintWriter out = new PrintWriter(text)) {
            rows = LockBench.run(new LockBench.Config(uri, 2, 4, Duration.ofMillis(200), Duration.ofMillis(50), 0,
                    Duration.ofSeconds(3)), out);
        }
        String printed = text.toString();
        System.out.print(printed); // in the surefire report, for people
        assertThat(printed).doesNotContain(LockUri.parse(uri).password().orElseThrow());

        for (String name : List.of("acquire+release, uncontended", SELECT_ONE, ADVISORY, COMMITS,
                "throughput, tryAcquire+release", "handoff, release in A -> waiter in B holds", "handoff, " + ADVISORY)) {
            assertThat(row(rows, name).samples()).as("samples of '%s'", name).isPositive();
        }
        for (String floor : List.of(SELECT_ONE, ADVISORY, COMMITS)) {
            assertThat(row(rows, floor).p50()).as("p50 of '%s'", floor).isPositive();
            assertThat(printed).contains("ratio of p50s: acquire+release / " + floor + " = ");
        }
        assertThat(printed).contains("ratio of p50s: handoff / " + ADVISORY + " handoff = ")
                .doesNotContain("no baseline installed");
        // under contention: the raw advisory lock beside every mode, the durable commits beside lease mode
        boolean lease = mode.equals(PgTestSupport.LEASE);
        List<String> spread = lease ? List.of(ADVISORY, COMMITS) : List.of(ADVISORY);
        for (String floor : spread) {
            assertThat(row(rows, "throughput, " + floor).samples()).as("rounds of '%s' under contention", floor).isPositive();
            assertThat(printed).contains("ratio of rates: throughput / " + floor + " throughput = ");
        }
        assertThat(rows).extracting(LockBench.Row::name).doesNotContain("throughput, " + SELECT_ONE);
        if (!lease) assertThat(rows).extracting(LockBench.Row::name).doesNotContain("throughput, " + COMMITS);
        assertThat(rows).extracting(LockBench.Row::name).doesNotContain("handoff, " + SELECT_ONE, "handoff, " + COMMITS);
    }

    private static LockBench.Row row(List<LockBench.Row> rows, String name) {
        return rows.stream().filter(r -> r.name().equals(name)).findFirst()
                .orElseThrow(() -> new AssertionError("no row '" + name + "' in " + rows));
    }
}
