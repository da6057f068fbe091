package dev.latchkey.example.redis;

import dev.latchkey.Latchkey;
import dev.latchkey.LockManager;
import dev.latchkey.spi.LockContext;
import dev.latchkey.tck.ExternalServer;
import dev.latchkey.tck.LockManagerContract;
import java.time.Duration;
import java.util.List;

/**
 * The kit's lock contract through {@code redis://}, with other processes; another spelling of the
 * same server and prefix must exclude it on the same keys.
 */
class RedisLockManagerTckTest extends LockManagerContract {
    @Override
    protected LockManager newManager(LockContext context) {
        return Latchkey.open(RedisServer.uri(), context);
    }

    /** The same server with {@code poll=}: the longest pause of a waiter between looks when no announcement wakes it. */
    @Override
    protected LockManager newManagerPollingEvery(Duration poll, LockContext context) {
        return Latchkey.open(ExternalServer.withParam(RedisServer.uri(), "poll", poll.toMillis() + "ms"), context);
    }

    @Override
    protected String uriForOtherProcesses() {
        return RedisServer.uri();
    }

    /** Client settings are not part of a lock's identity: server, database, prefix and key are. */
    @Override
    protected List<OtherConfiguration> otherConfigurations() {
        String uri = ExternalServer.withParam(ExternalServer.withParam(RedisServer.uri(), "timeout", "10s"), "prefix", "latchkey");
        return List.of(new OtherConfiguration() {
            @Override public String name() { return "timeout=10s&prefix=latchkey (the default, spelt out)"; }
            @Override public LockManager open(LockContext context) { return Latchkey.open(uri, context); }
        });
    }
}
