package dev.latchkey.postgres;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.latchkey.Lease;
import dev.latchkey.LockBackendException;
import dev.latchkey.LockManager;
import dev.latchkey.UnsupportedLockUriException;
import dev.latchkey.postgres.shared.PgTestSupport;
import java.sql.Connection;
import java.time.Duration;
import java.util.UUID;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;

/**
 * The DataSource route's own promises, on a real HikariCP pool against the real server: an
 * exhausted pool makes an acquisition fail (after the pool's wait), never grant a held key; closing
 * the manager leaves the application's pool open and every connection it took ended; a pooled
 * session that already holds an advisory lock is refused; options are validated as URI parameters.
 */
class PostgresLocksTest {
    private static String key() {
        return "clients-" + UUID.randomUUID();
    }

    @Test
    void anExhaustedPoolFailsTheAcquisitionAndNeverGrantsAHeldKey() {
        try (HikariDataSource pool = PgTestSupport.hikari(2, Duration.ofSeconds(1));
             LockManager locks = PostgresLocks.open(pool)) {
            String first = key();
            Lease a = locks.tryAcquire(first).orElseThrow();
            Lease b = locks.tryAcquire(key()).orElseThrow(); // both connections now pinned by a lease
            assertThatThrownBy(() -> locks.tryAcquire(first))
                    .isInstanceOf(LockBackendException.class)
                    .hasMessageContaining("the application's DataSource (HikariDataSource)")
                    .satisfies(e -> assertThat(((LockBackendException) e).isRetriable()).isTrue());
            assertThatThrownBy(() -> locks.tryAcquire(key())).isInstanceOf(LockBackendException.class);
            assertThat(a.isValid()).isTrue();
            a.release();
            // the released lease's session is free again: the next key gets it
            locks.tryAcquire(key()).orElseThrow().release();
            b.release();
        }
    }

    @Test
    void closingTheManagerEndsItsConnectionsButNotThePool() throws Exception {
        try (HikariDataSource pool = PgTestSupport.hikari(4, Duration.ofSeconds(10))) {
            for (PostgresLocks.Mode mode : PostgresLocks.Mode.values()) {
                LockManager locks = PostgresLocks.open(pool, PostgresLocks.options().mode(mode)
                        .schema(mode == PostgresLocks.Mode.LEASE ? "latchkey_lease" : "public"));
                Lease lease = locks.tryAcquire(key()).orElseThrow();
                assertThat(pool.getHikariPoolMXBean().getActiveConnections()).isPositive();
                lease.release();
                locks.close();
                assertThat(pool.isClosed()).isFalse();
                // every connection the manager took is ended, not parked in the pool with our session settings
                await(() -> pool.getHikariPoolMXBean().getTotalConnections() == 0, "the manager's connections to end");
                try (Connection c = pool.getConnection()) {
                    assertThat(c.isValid(5)).isTrue(); // the application's pool still works
                }
            }
        }
    }

    @Test
    void aPooledSessionThatAlreadyHoldsAnAdvisoryLockIsRefused() {
        HikariConfig config = PgTestSupport.hikariConfig(1, Duration.ofSeconds(30)); // HikariCP's default wait
        // stands for a pool that hands out sessions it never reset: each holds a lock when it arrives
        config.setConnectionInitSql("SELECT pg_advisory_lock(1)");
        try (HikariDataSource pool = new HikariDataSource(config);
             LockManager locks = PostgresLocks.open(pool)) {
            assertThatThrownBy(() -> locks.tryAcquire(key()))
                    .isInstanceOf(LockBackendException.class)
                    .hasMessageContaining("already holds 1 advisory lock(s)");
        }
    }

    @Test
    void optionsAreValidatedAsTheUrisParameters() {
        try (HikariDataSource pool = PgTestSupport.hikari(1, Duration.ofSeconds(1))) {
            assertThatThrownBy(() -> PostgresLocks.open(pool, PostgresLocks.options().schema("no-dashes")))
                    .isInstanceOf(UnsupportedLockUriException.class)
                    .hasMessageContaining("schema must be a plain SQL identifier");
            assertThatThrownBy(() -> PostgresLocks.open(pool, PostgresLocks.options().mode(PostgresLocks.Mode.LEASE).fencing(false)))
                    .isInstanceOf(UnsupportedLockUriException.class)
                    .hasMessageContaining("fencing=false applies to mode=advisory only");
            assertThat(pool.getHikariPoolMXBean().getTotalConnections()).isZero(); // refused before any I/O
        }
    }

    private static void await(BooleanSupplier condition, String what) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) throw new AssertionError("timed out waiting for " + what);
            Thread.sleep(20);
        }
    }
}
