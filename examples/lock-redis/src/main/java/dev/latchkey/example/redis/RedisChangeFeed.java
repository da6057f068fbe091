package dev.latchkey.example.redis;

import io.lettuce.core.RedisException;
import io.lettuce.core.RedisURI;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.pubsub.RedisPubSubAdapter;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * Wakes a store's waiters when a record changes: every write script also {@code PUBLISH}es the
 * record's key on the channel {@code <prefix>:changes}, to which this feed subscribes on a
 * connection of its own. Waiters are registered by record key.
 *
 * <p><b>Guarantee.</b> Only liveness, never safety: a wait ends at its bound whatever happens, and
 * a message lost while the feed is disconnected (Redis pub/sub keeps nothing for absent
 * subscribers) only makes a waiter wait out its bound. The subscription is confirmed before
 * {@link #open} returns, so every write after the store opened is announced while connected.
 */
final class RedisChangeFeed implements AutoCloseable {
    private final StatefulRedisPubSubConnection<String, String> connection;
    /** Waiters by record name; a latch is counted down once, by the first change of its name. */
    private final ConcurrentHashMap<String, Set<CountDownLatch>> waiters = new ConcurrentHashMap<>();

    private RedisChangeFeed(StatefulRedisPubSubConnection<String, String> connection) {
        this.connection = connection;
    }

    /** The channel the write scripts publish names on. */
    static String channel(RedisSettings settings) {
        return settings.prefix() + ":changes";
    }

    static RedisChangeFeed open(RedisSettings settings) {
        RedisURI uri = RedisConnection.redisUri(settings);
        StatefulRedisPubSubConnection<String, String> connection;
        try {
            connection = RedisConnection.client().connectPubSub(StringCodec.UTF8, uri);
        } catch (RedisException e) {
            throw RedisConnection.connectFailure(settings, uri, e);
        }
        RedisChangeFeed feed = new RedisChangeFeed(connection);
        connection.addListener(new RedisPubSubAdapter<>() {
            @Override
            public void message(String channel, String key) {
                feed.changed(key);
            }
        });
        try {
            connection.sync().subscribe(channel(settings)); // Lettuce subscribes again after a reconnect
        } catch (RedisException e) {
            connection.close();
            throw RedisConnection.connectFailure(settings, uri, e);
        }
        return feed;
    }

    /**
     * Registers a waiter for {@code name}, runs {@code stillUnchanged} (a read: a change between the
     * caller's read and this registration is not missed), and if that holds waits at most
     * {@code max} for a change.
     */
    void await(String name, Duration max, BooleanSupplier stillUnchanged) throws InterruptedException {
        CountDownLatch latch = new CountDownLatch(1);
        // add and remove inside the map's per-key atomic updates: a set is never dropped while added to
        waiters.compute(name, (n, set) -> {
            Set<CountDownLatch> s = set != null ? set : ConcurrentHashMap.newKeySet();
            s.add(latch);
            return s;
        });
        try {
            if (stillUnchanged.getAsBoolean()) latch.await(Math.max(1, max.toNanos()), TimeUnit.NANOSECONDS);
        } finally {
            waiters.computeIfPresent(name, (n, set) -> {
                set.remove(latch);
                return set.isEmpty() ? null : set;
            });
        }
    }

    private void changed(String name) {
        Set<CountDownLatch> set = waiters.get(name);
        if (set != null) set.forEach(CountDownLatch::countDown);
    }

    @Override
    public void close() {
        connection.close();
    }
}
