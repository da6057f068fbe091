package dev.latchkey.cli.check;

import dev.latchkey.LockManager;
import dev.latchkey.spi.LockContext;
import dev.latchkey.tck.LockManagerContract;
import java.time.Duration;

/**
 * The lock contract against the deployment of the check that is running ({@link LiveCheck}):
 * every manager is a fresh open of its URI (with the check's backends, so a plugin's too), so each has its
 * own connections as another process would. Keys carry the contract's random tag, so it touches
 * nothing else in the store. Instantiated by JUnit only while a check runs.
 */
public final class LiveLockContract extends LockManagerContract {
    private final LiveCheck.Settings settings = LiveCheck.current();

    @Override
    protected LockManager newManager(LockContext context) {
        return settings.backends().open(settings.uri(), context);
    }

    @Override
    protected Duration shortTtl() {
        return settings.ttl();
    }

    /** Null on purpose: the multi-process tests start child JVMs that need the TCK's test class path. */
    @Override
    protected String uriForOtherProcesses() {
        return null;
    }
}
