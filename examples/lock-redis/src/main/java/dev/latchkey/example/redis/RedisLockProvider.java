package dev.latchkey.example.redis;

import dev.latchkey.Capability;
import dev.latchkey.LockBackendException;
import dev.latchkey.LockManager;
import dev.latchkey.engine.ConditionalStoreLockManager;
import dev.latchkey.spi.LockContext;
import dev.latchkey.spi.LockProvider;
import dev.latchkey.spi.LockUri;
import io.lettuce.core.RedisException;
import java.util.EnumSet;
import java.util.Set;

/**
 * {@code redis://[[user]:password@]host[:port][/db][?prefix=latchkey&timeout=2s&poll=100ms&requireAof=true]}
 * ({@link RedisSettings}): locks as hashes {@code <prefix>:<encoded key>} on one Redis primary,
 * changed only by the Lua compare-and-set scripts of {@link RedisConditionalStore}, run by the
 * kit's {@link ConditionalStoreLockManager} (heartbeats, fencing tokens, takeover of abandoned leases); waiters
 * are woken by the writes' announcements ({@code NATIVE_WAIT}).
 *
 * <p><b>Guarantee.</b> Mutual exclusion and increasing fencing tokens hold as long as the one
 * primary named by the URI keeps every write it acknowledged — which needs its append-only file:
 * at open, a server reporting {@code aof_enabled:0} is refused unless the URI says
 * {@code requireAof=false}. They do not survive a failover to an asynchronous replica, which can
 * lose acknowledged writes (README.md). Staleness is judged on each client's monotonic clock, so
 * no wall clock (client or server) is trusted; a fresh process waits a TTL before it takes over an
 * abandoned lease.
 */
public final class RedisLockProvider implements LockProvider {
    @Override
    public Set<String> schemes() {
        return Set.of("redis");
    }

    @Override
    public String description() {
        return "Redis (one primary with an append-only file): Lua compare-and-set records under the lease engine";
    }

    @Override
    public LockManager open(LockUri uri, LockContext context) {
        RedisSettings settings = RedisSettings.parse(uri);
        return new ConditionalStoreLockManager(openStore(settings), context, EnumSet.of(Capability.NATIVE_WAIT), settings.poll());
    }

    /** The store alone, for the kit's CAS and fault contracts. */
    public static RedisConditionalStore openStore(LockUri uri) {
        return openStore(RedisSettings.parse(uri));
    }

    private static RedisConditionalStore openStore(RedisSettings settings) {
        RedisConnection connection = RedisConnection.open(settings);
        try {
            if (settings.requireAof()) requireAppendOnlyFile(connection, settings);
            return new RedisConditionalStore(connection, RedisChangeFeed.open(settings), settings);
        } catch (RuntimeException e) {
            connection.close();
            throw e;
        }
    }

    /** {@code INFO persistence} (allowed where {@code CONFIG} is not, e.g. on managed services). */
    private static void requireAppendOnlyFile(RedisConnection connection, RedisSettings settings) {
        String info;
        try {
            info = connection.run(c -> c.info("persistence"));
        } catch (RedisException e) {
            throw new LockBackendException("cannot read INFO persistence from Redis at " + settings.describe() + ": "
                    + RedisErrors.rootMessage(e) + " (allow INFO, or add requireAof=false if you accept the risk "
                    + "README.md describes)", true, e);
        }
        if (!info.contains("aof_enabled:1")) {
            throw new LockBackendException("Redis at " + settings.describe() + " has no append-only file "
                    + "(aof_enabled:0): a restart would lose lock records, letting a second holder in and "
                    + "handing out fencing tokens again. Set appendonly yes (and appendfsync always), or add "
                    + "requireAof=false to the URI if you accept that", false);
        }
    }
}
