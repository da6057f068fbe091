package dev.latchkey.example.redis;

import dev.latchkey.Capability;
import dev.latchkey.LockManager;
import dev.latchkey.engine.ConditionalStoreLockManager;
import dev.latchkey.spi.ConditionalStore;
import dev.latchkey.spi.LockContext;
import dev.latchkey.spi.LockUri;
import dev.latchkey.tck.StoreFaultContract;
import java.util.EnumSet;

/** The kit's store faults (lost replies, refused writes, hung renewals, random faults) over the Redis store. */
class RedisStoreFaultTest extends StoreFaultContract {
    @Override
    protected ConditionalStore newStore() {
        return RedisLockProvider.openStore(LockUri.parse(RedisServer.uri()));
    }

    /** As {@link RedisLockProvider} builds it. */
    @Override
    protected LockManager newManager(ConditionalStore store, LockContext context) {
        return new ConditionalStoreLockManager(store, context, EnumSet.of(Capability.NATIVE_WAIT));
    }
}
