package dev.latchkey.postgres.lease;

import dev.latchkey.Latchkey;
import dev.latchkey.LockManager;
import dev.latchkey.postgres.shared.PgTestSupport;
import dev.latchkey.spi.LockContext;
import dev.latchkey.tck.LockManagerContract;
import dev.latchkey.tck.ServerClock;
import java.time.Duration;
import java.util.List;

/** The full TCK against mode=lease. */
class LeaseTckTest extends LockManagerContract {
    @Override
    protected LockManager newManager(LockContext context) {
        return Latchkey.open(uriForOtherProcesses(), context);
    }

    /** The same URI with {@code poll=}: how often its waiters look again when no notification arrives. */
    @Override
    protected LockManager newManagerPollingEvery(Duration poll, LockContext context) {
        return Latchkey.open(PgTestSupport.with(uriForOtherProcesses(), "poll=" + poll.toMillis() + "ms"), context);
    }

    /** The server is shared by every process: the multi-process tests run too. */
    @Override
    protected String uriForOtherProcesses() {
        return PgTestSupport.with(PgTestSupport.uri(), PgTestSupport.LEASE);
    }

    /** A server of its own under libfaketime, for the kit's server-clock tests only (the rest use the shared one). */
    @Override
    protected ServerClock serverClock() {
        return PgClockServer.get();
    }

    /** The other mode on the same schema: refused, naming the mismatch (a schema's locks are kept one way). */
    @Override
    protected List<OtherConfiguration> otherConfigurations() {
        return List.of(new OtherConfiguration() {
            @Override public String name() { return "mode=advisory in the same schema"; }
            @Override public LockManager open(LockContext context) { return Latchkey.open(PgTestSupport.with(PgTestSupport.uri(), PgTestSupport.LEASE.replace("mode=lease", "mode=advisory")), context); }
        });
    }
}
