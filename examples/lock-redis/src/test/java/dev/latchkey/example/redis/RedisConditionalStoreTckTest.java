package dev.latchkey.example.redis;

import dev.latchkey.spi.ConditionalStore;
import dev.latchkey.spi.LockUri;
import dev.latchkey.tck.ConditionalStoreContract;

/** The kit's CAS contract on the Lua scripts: racing creates and replaces, versions that never repeat. */
class RedisConditionalStoreTckTest extends ConditionalStoreContract {
    @Override
    protected ConditionalStore newStore() {
        return RedisLockProvider.openStore(LockUri.parse(RedisServer.uri()));
    }

    /** Every write script publishes the record's key; awaitChange listens (RedisChangeFeed). */
    @Override
    protected boolean wakesOnChange() {
        return true;
    }
}
