package dev.latchkey.bench.peers;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.latchkey.bench.Baseline;
import dev.latchkey.bench.LockBench;
import dev.latchkey.spi.LockUri;
import dev.latchkey.tck.ExternalServer;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Lock;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.postgresql.Driver;
import org.springframework.integration.jdbc.lock.DefaultLockRepository;
import org.springframework.integration.jdbc.lock.JdbcLockRegistry;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.SingleConnectionDataSource;

/**
 * The Spring Integration peer against a real PostgreSQL ({@code LATCHKEY_TEST_POSTGRES_URI}, else a server of
 * {@code scripts/postgres.sh}): sessions exclude each other across registries (also on key i under contention),
 * the table lives exactly as long as the sessions, and {@code latchkey bench} prints the peer's rows and ratios
 * (the throughput under contention beside lease mode). No timing is asserted.
 */
class SpringJdbcLockRegistryBaselineTest {
    private static String uri;
    private static ExecutorService waiter;
    private static volatile Thread waiterThread;

    @BeforeAll
    static void server() {
        uri = ExternalServer.uri("LATCHKEY_TEST_POSTGRES_URI", "postgres");
        waiter = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "peer-test-waiter");
            t.setDaemon(true);
            waiterThread = t;
            return t;
        });
    }

    @AfterAll
    static void stop() {
        waiter.shutdownNow();
    }

    @Test
    void mapsTheLatchkeyUriToJdbcWithoutLatchkeysOwnParameters() {
        LockUri lockUri = LockUri.parse("postgresql://bob:p%40ss@db.example:6543/locks%20db"
                + "?mode=lease&schema=app&fencing=false&sslmode=disable&ApplicationName=x");
        SpringJdbcLockRegistryBaseline.Jdbc jdbc = SpringJdbcLockRegistryBaseline.Jdbc.of(lockUri, Map.of());

        assertThat(jdbc.url).isEqualTo("jdbc:postgresql://db.example:6543/locks%20db");
        assertThat(jdbc.properties).containsEntry("user", "bob").containsEntry("password", "p@ss")
                .containsEntry("sslmode", "disable").containsEntry("ApplicationName", "x")
                .doesNotContainKeys("mode", "schema", "fencing");
        assertThat(jdbc.schema).contains("app");
        assertThat(jdbc.url).doesNotContain("p@ss").doesNotContain("p%40ss");

        SpringJdbcLockRegistryBaseline.Jdbc defaults = SpringJdbcLockRegistryBaseline.Jdbc.of(LockUri.parse("postgres://[::1]"),
                Map.of("PGUSER", "carol", "PGPASSWORD", "secret"));
        assertThat(defaults.url).isEqualTo("jdbc:postgresql://[::1]:5432/carol");
        assertThat(defaults.properties).containsEntry("user", "carol").containsEntry("password", "secret");
        assertThat(defaults.schema).isEmpty();
    }

    @Test
    void isRegisteredAsAPeerWithHandoffForBothPostgresSchemes() {
        for (String scheme : List.of("postgres", "postgresql")) {
            assertThat(Baseline.forScheme(scheme))
                    .filteredOn(b -> b instanceof SpringJdbcLockRegistryBaseline)
                    .singleElement()
                    .satisfies(b -> {
                        assertThat(b.kind()).isEqualTo(Baseline.Kind.PEER);
                        assertThat(b.hasHandoff()).isTrue();
                        assertThat(b.description()).startsWith("Spring Integration 7.1").contains("JdbcLockRegistry");
                    });
        }
        assertThat(Baseline.forScheme("mem")).noneMatch(b -> b instanceof SpringJdbcLockRegistryBaseline);
    }

    @Test
    @SuppressWarnings("try") // Baseline.Session.close() throws Exception
    void sessionsAreSeparateRegistriesThatExcludeEachOtherAndHandOff() throws Exception {
        SpringJdbcLockRegistryBaseline peer = new SpringJdbcLockRegistryBaseline();
        LockUri lockUri = LockUri.parse(uri);
        try (Baseline.Session a = peer.open(lockUri); Baseline.Session b = peer.open(lockUri)) {
            a.acquire();
            assertThat(rows(peer)).isEqualTo(1);
            // the same thread: only the table, not a JVM-local ReentrantLock, can make b's tryLock fail
            assertThatThrownBy(b::acquire).isInstanceOf(IllegalStateException.class).hasMessageContaining("held");
            a.release();
            assertThat(rows(peer)).isZero();

            b.acquire();
            assertThatThrownBy(a::acquire).isInstanceOf(IllegalStateException.class);
            b.release();

            // handoff: b waits in lock() (polling the table) on another thread until a releases
            a.acquire();
            Future<?> waiting = waiter.submit(() -> {
                b.acquireWaiting();
                return null;
            });
            // lock() sleeps between its tries: once the waiter sleeps there, it has tried and found the key held
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (!sleepingBetweenTries(waiterThread)) {
                assertThat(System.nanoTime()).as("the waiter sleeps between tries in JdbcLockRegistry lock()").isLessThan(deadline);
                TimeUnit.MILLISECONDS.sleep(5); // pacing between looks at the waiter's stack
            }
            assertThat(waiting).isNotDone();
            a.release();
            waiting.get(60, TimeUnit.SECONDS); // a guard against a hang, not a timing assertion
            assertThatThrownBy(a::acquire).isInstanceOf(IllegalStateException.class);
            waiter.submit(() -> {
                b.release(); // unlock() belongs to the locking thread
                return null;
            }).get(60, TimeUnit.SECONDS);
            a.acquire();
            a.release();
        }
    }

    @Test
    void spreadsBesideLeaseModeOnly() {
        SpringJdbcLockRegistryBaseline peer = new SpringJdbcLockRegistryBaseline();
        assertThat(peer.hasSpread(LockUri.parse("postgres://db/x?mode=lease&schema=s"))).isTrue();
        assertThat(peer.hasSpread(LockUri.parse("postgres://db/x?mode=LEASE"))).isTrue();
        assertThat(peer.hasSpread(LockUri.parse("postgres://db/x?mode=advisory"))).isFalse();
        assertThat(peer.hasSpread(LockUri.parse("postgres://db/x"))).as("advisory is the default mode").isFalse();
    }

    @Test
    @SuppressWarnings("try") // Baseline.Session.close() throws Exception
    void underContentionAKeyAnotherRegistryHoldsInTheTableIsBusy() throws Exception {
        SpringJdbcLockRegistryBaseline peer = new SpringJdbcLockRegistryBaseline();
        LockUri lockUri = LockUri.parse(uri);
        try (Baseline.Session session = peer.open(lockUri)) {
            // another process's registry on the peer's table (its name is the prefix, then "lock")
            SingleConnectionDataSource other = new SingleConnectionDataSource(connect(), true);
            DefaultLockRepository repository = new DefaultLockRepository(other);
            try {
                repository.setPrefix(peer.tableName().substring(0, peer.tableName().length() - "lock".length()));
                DataSourceTransactionManager transactions = new DataSourceTransactionManager(other);
                transactions.afterPropertiesSet();
                repository.setTransactionManager(transactions);
                repository.afterPropertiesSet();
                repository.afterSingletonsInstantiated();
                repository.start();
                Lock held = new JdbcLockRegistry(repository).obtain(peer.key() + "-3");
                assertThat(session.tryRound(3)).as("key 3, free").isTrue();
                assertThat(rows(peer)).as("a round gives its row back").isZero();

                held.lock(); // on this thread too: only the table, not a JVM-local ReentrantLock, can make a round busy
                assertThat(session.tryRound(3)).as("key 3 while another registry holds it").isFalse();
                assertThat(session.tryRound(4)).as("another key").isTrue();
                held.unlock();
                assertThat(session.tryRound(3)).as("key 3 once released").isTrue();
            } finally {
                repository.close();
                other.destroy();
            }
        }
        assertThat(leftoverTables()).isZero();
    }

    @Test
    @SuppressWarnings("try") // Baseline.Session.close() throws Exception
    void theFirstSessionCreatesTheTableAndTheLastDropsIt() throws Exception {
        SpringJdbcLockRegistryBaseline peer = new SpringJdbcLockRegistryBaseline();
        LockUri lockUri = LockUri.parse(uri);
        assertThat(tableExists(peer)).isFalse();
        Baseline.Session first = peer.open(lockUri);
        Baseline.Session second = peer.open(lockUri);
        assertThat(tableExists(peer)).isTrue();
        first.close();
        first.close(); // idempotent: must not count twice
        assertThat(tableExists(peer)).isTrue();
        second.close();
        assertThat(tableExists(peer)).isFalse();

        try (Baseline.Session again = peer.open(lockUri)) { // reopened after the last close: created anew
            again.acquire();
            again.release();
        }
        assertThat(tableExists(peer)).isFalse();
        assertThat(peer.lockTableDdl("s.p_")).startsWith("CREATE TABLE IF NOT EXISTS s.p_LOCK")
                .contains("LOCK_KEY").contains("EXPIRED_AFTER").doesNotContain("INT_");
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "mode=lease&schema=latchkey_lease"})
    void benchPrintsThePeerAndItsHandoffBesideLatchkey(String mode) throws Exception {
        if (!mode.isEmpty()) {
            try (Connection c = connect()) { // as scripts/bench.sh does: the peer opens its table before the lock makes the schema
                c.createStatement().execute("CREATE SCHEMA IF NOT EXISTS latchkey_lease");
            }
        }
        String measured = mode.isEmpty() ? uri : uri + (uri.contains("?") ? "&" : "?") + mode;
        StringWriter text = new StringWriter();
        LockBench.Config config = new LockBench.Config(measured, 2, 4, Duration.ofMillis(300), Duration.ofMillis(50), 0,
                Duration.ofSeconds(3));

        List<LockBench.Row> rows = LockBench.run(config, new PrintWriter(text));
        System.out.print(text);

        String peer = "peer: " + new SpringJdbcLockRegistryBaseline().description();
        assertThat(rows).filteredOn(r -> r.name().equals(peer)).singleElement()
                .satisfies(r -> assertThat(r.samples()).isPositive());
        assertThat(rows).filteredOn(r -> r.name().equals("handoff, " + peer)).singleElement()
                .satisfies(r -> assertThat(r.samples()).isPositive());
        assertThat(rows).filteredOn(r -> r.name().equals("acquire+release, uncontended")).singleElement()
                .satisfies(r -> assertThat(r.samples()).isPositive());
        assertThat(text.toString())
                .contains("ratio of p50s: acquire+release / " + peer + " = ")
                .contains("ratio of p50s: handoff / " + peer + " handoff = ")
                .doesNotContain(LockUri.parse(uri).password().orElse("no password in the URI"));
        if (mode.isEmpty()) {
            assertThat(rows).extracting(LockBench.Row::name).doesNotContain("throughput, " + peer);
        } else {
            assertThat(rows).filteredOn(r -> r.name().equals("throughput, " + peer)).singleElement()
                    .satisfies(r -> assertThat(r.samples()).as("rounds under contention").isPositive());
            assertThat(text.toString()).contains("ratio of rates: throughput / " + peer + " throughput = ");
        }
        assertThat(leftoverTables()).isZero();
    }

    /** True while {@code t} sleeps in Thread.sleep called from Spring's JDBC lock (its pause between tries). */
    private static boolean sleepingBetweenTries(Thread t) {
        if (t == null || t.getState() != Thread.State.TIMED_WAITING) return false;
        StackTraceElement[] stack = t.getStackTrace();
        boolean sleeping = stack.length > 0 && stack[0].getClassName().equals("java.lang.Thread")
                && stack[0].getMethodName().startsWith("sleep");
        return sleeping && java.util.Arrays.stream(stack)
                .anyMatch(f -> f.getClassName().startsWith("org.springframework.integration.jdbc.lock."));
    }

    private static Connection connect() throws Exception {
        SpringJdbcLockRegistryBaseline.Jdbc jdbc = SpringJdbcLockRegistryBaseline.Jdbc.of(LockUri.parse(uri));
        return new Driver().connect(jdbc.url, jdbc.properties);
    }

    private static boolean tableExists(SpringJdbcLockRegistryBaseline peer) throws Exception {
        try (Connection c = connect();
             PreparedStatement s = c.prepareStatement("SELECT count(*) FROM pg_tables WHERE tablename = ?")) {
            s.setString(1, peer.tableName());
            try (ResultSet r = s.executeQuery()) {
                r.next();
                return r.getInt(1) > 0;
            }
        }
    }

    private static int rows(SpringJdbcLockRegistryBaseline peer) throws Exception {
        try (Connection c = connect();
             ResultSet r = c.createStatement().executeQuery("SELECT count(*) FROM " + peer.tableName())) {
            r.next();
            return r.getInt(1);
        }
    }

    private static int leftoverTables() throws Exception {
        try (Connection c = connect();
             ResultSet r = c.createStatement().executeQuery(
                     "SELECT count(*) FROM pg_tables WHERE tablename LIKE 'latchkey\\_bench\\_spring\\_%'")) {
            r.next();
            return r.getInt(1);
        }
    }
}
