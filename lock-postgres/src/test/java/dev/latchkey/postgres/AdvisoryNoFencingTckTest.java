package dev.latchkey.postgres;

import dev.latchkey.Latchkey;
import dev.latchkey.LockManager;
import dev.latchkey.spi.LockContext;
import dev.latchkey.tck.LockManagerContract;

/**
 * The full TCK against {@code mode=advisory&fencing=false}, where a key's second and later
 * acquisitions write no row on the way in (inspect and list then wait for the background write).
 */
class AdvisoryNoFencingTckTest extends LockManagerContract {
    @Override
    protected LockManager newManager(LockContext context) {
        return Latchkey.open(uriForOtherProcesses(), context);
    }

    @Override
    protected String uriForOtherProcesses() {
        return PgTestSupport.with(PgTestSupport.uri(), "fencing=false");
    }
}
