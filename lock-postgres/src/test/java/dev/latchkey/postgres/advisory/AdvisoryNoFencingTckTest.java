package dev.latchkey.postgres.advisory;

import com.zaxxer.hikari.HikariDataSource;
import dev.latchkey.LockManager;
import dev.latchkey.postgres.PostgresLocks;
import dev.latchkey.postgres.shared.PgTestSupport;
import dev.latchkey.spi.LockContext;
import dev.latchkey.tck.LockManagerContract;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * The full TCK against {@code mode=advisory&fencing=false}, where a key's second and later
 * acquisitions write no row on the way in (inspect and list then wait for the background write) —
 * through the application's-client route: every manager of this JVM opens on one shared HikariCP
 * pool ({@link PostgresLocks}), as an application's would, while the other processes of the
 * multi-process tests open the same locks by URI, so both routes must exclude each other. (The
 * URI route's own TCK is {@link AdvisoryTckTest} and {@code LeaseTckTest}.)
 */
class AdvisoryNoFencingTckTest extends LockManagerContract {
    /** Room for the contract's most concurrent leases (one pinned connection each) and its managers' idle ones. */
    private static HikariDataSource pool;

    @BeforeAll
    static void openPool() {
        pool = PgTestSupport.fixedSizeHikari(60, Duration.ofSeconds(30));
    }

    /** The application closes its pool; the managers never did (see {@code PostgresLocksTest}). */
    @AfterAll
    static void closePool() {
        pool.close();
    }

    @Override
    protected LockManager newManager(LockContext context) {
        return PostgresLocks.open(pool, PostgresLocks.options().fencing(false).pool(2), context);
    }

    @Override
    protected LockManager newManagerPollingEvery(Duration poll, LockContext context) {
        return PostgresLocks.open(pool, PostgresLocks.options().fencing(false).pool(2).poll(poll), context);
    }

    @Override
    protected String uriForOtherProcesses() {
        return PgTestSupport.with(PgTestSupport.uri(), "fencing=false");
    }
}
