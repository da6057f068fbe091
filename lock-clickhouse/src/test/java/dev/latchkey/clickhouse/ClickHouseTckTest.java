package dev.latchkey.clickhouse;

import dev.latchkey.Latchkey;
import dev.latchkey.LockManager;
import dev.latchkey.spi.LockContext;
import dev.latchkey.tck.ExternalServer;
import dev.latchkey.tck.LockManagerContract;
import java.time.Duration;
import java.util.List;

/**
 * The full Latchkey TCK against the real ClickHouse server. A short settle window (150 ms) keeps
 * the run fast (on one server safety does not rest on it); stale 120 s admits the TCK's one-minute
 * leases.
 */
class ClickHouseTckTest extends LockManagerContract {
    private static final String URI = ClickHouseTestServer.uri("table=tck_locks&settle=150ms&stale=120s");

    @Override
    protected LockManager newManager(LockContext context) {
        return Latchkey.open(URI, context);
    }

    /**
     * 3 s instead of 1 s: an acquisition here costs the settle window plus three round trips
     * (≈200 ms, a fifth of a 1 s TTL), and once, in a full run on a loaded 2-core machine, no
     * heartbeat of a 1 s lease landed for about a second and a contender rightly took the key.
     */
    @Override
    protected Duration shortTtl() {
        return Duration.ofSeconds(3);
    }

    /**
     * Another service on the same table with its own settle window and timeout: candidates of both
     * are ordered by one block order and judged by one server clock, so they must exclude each other.
     */
    @Override
    protected List<OtherConfiguration> otherConfigurations() {
        String other = ExternalServer.withParam(ExternalServer.withParam(URI, "settle", "1s"), "timeout", "2s");
        return List.of(new OtherConfiguration() {
            @Override
            public String name() {
                return "settle=1s&timeout=2s";
            }

            @Override
            public LockManager open(LockContext context) {
                return Latchkey.open(other, context);
            }
        });
    }

    /** The server is a separate process: other JVMs share it through the same URI. */
    @Override
    protected String uriForOtherProcesses() {
        return URI;
    }
}
