package dev.latchkey.postgres.advisory;

import dev.latchkey.Latchkey;
import dev.latchkey.LockManager;
import dev.latchkey.postgres.shared.PgTestSupport;
import dev.latchkey.spi.LockContext;
import dev.latchkey.tck.LockManagerContract;
import java.time.Duration;
import java.util.List;

/** The full TCK against mode=advisory (the default). */
class AdvisoryTckTest extends LockManagerContract {
    @Override
    protected LockManager newManager(LockContext context) {
        return Latchkey.open(uriForOtherProcesses(), context);
    }

    /** The same URI with {@code poll=} (its waiters queue in the server, so the poll should not matter). */
    @Override
    protected LockManager newManagerPollingEvery(Duration poll, LockContext context) {
        return Latchkey.open(PgTestSupport.with(uriForOtherProcesses(), "poll=" + poll.toMillis() + "ms"), context);
    }

    /** The server is shared by every process: the multi-process tests run too. */
    @Override
    protected String uriForOtherProcesses() {
        return PgTestSupport.uri();
    }

    /** The other mode on the same schema: refused, naming the mismatch (a schema's locks are kept one way). */
    @Override
    protected List<OtherConfiguration> otherConfigurations() {
        return List.of(new OtherConfiguration() {
            @Override public String name() { return "mode=lease in the same schema"; }
            @Override public LockManager open(LockContext context) { return Latchkey.open(PgTestSupport.with(PgTestSupport.uri(), "mode=lease"), context); }
        });
    }
}
