package dev.latchkey.clickhouse;

import com.zaxxer.hikari.HikariDataSource;
import dev.latchkey.Latchkey;
import dev.latchkey.LockManager;
import dev.latchkey.spi.LockContext;
import dev.latchkey.tck.LockManagerContract;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;

/**
 * The whole Latchkey TCK against the real ClickHouse server through the JDBC route: every manager
 * of this JVM opens on one HikariCP pool around ClickHouse's JDBC driver ({@link ClickHouseLocks#open(javax.sql.DataSource,
 * ClickHouseLocks.Options, LockContext)}), the other configuration and the other processes by URI on
 * the same table ({@code tck_locks}, shared with {@link ClickHouseTckTest}), so the two routes must
 * exclude each other. Settle, stale and the short TTL are {@link ClickHouseTckTest}'s, for its reasons.
 *
 * <p>Only the contract runs twice. The fault classes — {@link ClickHouseNetworkFaultTest} (replies
 * lost, delayed, reset through a fault proxy), {@link ClickHouseOutageTest} (the server stopped),
 * {@link ClickHouseLockTest} (schema, stale reclaim, merges, races) and the statement count — run on
 * the URI route alone: what they exercise (tombstones of unconfirmed candidates, background
 * withdrawals, the heartbeat's condition and bounds, the SQL) is {@link ClickHouseLockManager}'s,
 * written once above the route. What differs by route is how each request carries its limits and
 * parameters ({@link JdbcStatements}): that is what this contract, and {@link ClickHouseJdbcTest}'s
 * checks of bound keys and refused drivers, exercise. Re-running the fault classes would add about
 * two minutes to a module that CI gives about one more; for the same reason the multi-process tests
 * are skipped and the contention test is shorter (below).
 */
@Execution(ExecutionMode.CONCURRENT)
class ClickHouseJdbcTckTest extends LockManagerContract {
    private static final String URI = ClickHouseTestServer.uri("table=tck_locks&settle=150ms&stale=120s");
    /** As {@link ClickHouseTckTest}'s client: the tests that run at once, contention's eight threads and renewers. */
    private static final int CONNECTIONS = 32;
    private static HikariDataSource pool;

    @BeforeAll
    static void openPool() {
        pool = ClickHouseTestServer.jdbcPool(CONNECTIONS);
    }

    /** The application closes its pool; the managers never do. */
    @AfterAll
    static void closePool() {
        pool.close();
    }

    @Override
    protected LockManager newManager(LockContext context) {
        return ClickHouseLocks.open(pool, ClickHouseLocks.options().database(ClickHouseTestServer.database()).table("tck_locks")
                .settle(Duration.ofMillis(150)).stale(Duration.ofSeconds(120)), context);
    }

    /** As {@link ClickHouseTckTest#shortTtl()}. */
    @Override
    protected Duration shortTtl() {
        return Duration.ofSeconds(5);
    }

    /** The URI route (client-v2) on the same table: both routes' candidates are ordered by one block order. */
    @Override
    protected List<OtherConfiguration> otherConfigurations() {
        return List.of(new OtherConfiguration() {
            @Override
            public String name() {
                return "the URI route";
            }

            @Override
            public LockManager open(LockContext context) {
                return Latchkey.open(URI, context);
            }
        });
    }

    /**
     * None: the multi-process tests are skipped here. Their child JVMs open the locks by URI, so
     * {@code processesContendingOnOneKeyNeverOverlap} would re-run {@link ClickHouseTckTest}'s test
     * unchanged, and {@code killedHolderProcessLosesTheLock} adds only a takeover after the TTL,
     * which the contract's in-process takeover tests run on this route.
     */
    @Override
    protected String uriForOtherProcesses() {
        return null;
    }

    /**
     * 10 instead of 25 sections per thread (80 in all, over four managers, each on the pool): the
     * exclusion it checks is the lock logic's, run at 200 sections by {@link ClickHouseTckTest};
     * here it must show that requests through JDBC keep it, at two fifths of the time.
     */
    @Override
    protected int contentionRounds() {
        return 10;
    }
}
