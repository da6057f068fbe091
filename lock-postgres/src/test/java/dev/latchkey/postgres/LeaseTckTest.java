package dev.latchkey.postgres;

import dev.latchkey.Latchkey;
import dev.latchkey.LockManager;
import dev.latchkey.spi.LockContext;
import dev.latchkey.tck.LockManagerContract;

/** The full TCK against mode=lease. */
class LeaseTckTest extends LockManagerContract {
    @Override
    protected LockManager newManager(LockContext context) {
        return Latchkey.open(uriForOtherProcesses(), context);
    }

    /** The server is shared by every process: the multi-process tests run too. */
    @Override
    protected String uriForOtherProcesses() {
        return PgTestSupport.with(PgTestSupport.uri(), PgTestSupport.LEASE);
    }
}
