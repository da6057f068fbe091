package dev.latchkey.example.redis;

import dev.latchkey.LockBackendException;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisException;
import io.lettuce.core.RedisURI;
import io.lettuce.core.SocketOptions;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.codec.ByteArrayCodec;
import io.lettuce.core.resource.DefaultClientResources;
import io.lettuce.core.resource.Delay;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * One Lettuce connection to the server a {@link RedisSettings} names, shared by every thread of one
 * store (Lettuce pipelines concurrent commands over it).
 *
 * <p><b>Guarantee.</b> Every command ends within {@link RedisSettings#timeout()} (then with
 * {@link io.lettuce.core.RedisCommandTimeoutException}); while the connection is down commands
 * fail at once instead of queueing for a later reconnect, so no write is sent long after its caller
 * gave up on it (one already on the wire may still land: that is what "outcome unknown" means). The
 * connection re-establishes itself in the background after a reset. The password goes to Lettuce
 * only, never into a message.
 */
final class RedisConnection implements AutoCloseable {
    /** One command against the connection's synchronous API. */
    @FunctionalInterface
    interface Command<T> {
        T run(RedisCommands<byte[], byte[]> commands);
    }

    /**
     * One client (event loops, timers) for every store of this class loader: a process may open
     * many managers, and a client per store would start and stop thread pools with each. Its
     * threads are daemons. Reconnect attempts back off to at most a second (Lettuce's default: 30 s),
     * so a heartbeat finds the server again within a fraction of a TTL after it comes back.
     */
    private static final class Shared {
        static final RedisClient CLIENT = create();

        private static RedisClient create() {
            RedisClient client = RedisClient.create(DefaultClientResources.builder()
                    .reconnectDelay(Delay.exponential(Duration.ofMillis(10), Duration.ofSeconds(1), 2, TimeUnit.MILLISECONDS))
                    .build());
            client.setOptions(ClientOptions.builder()
                    .autoReconnect(true)
                    // fail while disconnected: a buffered write would be sent after its caller timed out
                    .disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
                    .socketOptions(SocketOptions.builder().keepAlive(true).build())
                    // each command's timeout is its connection's (setTimeout: the URI's timeout=)
                    .timeoutOptions(TimeoutOptions.enabled())
                    .build());
            return client;
        }
    }

    /** The least time a connection's set-up gets. */
    private static final Duration SETUP_FLOOR = Duration.ofSeconds(10);

    /**
     * How often a set-up whose handshake outcome Lettuce lost, or whose connection it closed at once,
     * is tried. When the server refuses the
     * handshake (a wrong password) and the channel closes before Lettuce's connect listener runs, that
     * listener finds no handshake handler and reports "RedisHandshakeHandler not registered" (an
     * {@link IllegalStateException}) instead of the refusal; another attempt almost always reports
     * the refusal itself, which is what tells the user to check the password.
     */
    private static final int HANDSHAKE_ATTEMPTS = 3;

    private final StatefulRedisConnection<byte[], byte[]> connection;
    /** The engine closes its store, and so may the store's owner: close once (Lettuce warns on a second). */
    private final AtomicBoolean closed = new AtomicBoolean();

    private RedisConnection(StatefulRedisConnection<byte[], byte[]> connection) {
        this.connection = connection;
    }

    /**
     * Connects (and authenticates) now, so a wrong address or password fails at open. Setting up a
     * connection (TCP, HELLO, AUTH, SELECT) may take up to {@link #SETUP_FLOOR} even when commands
     * get less: a fresh process on a busy machine spends seconds loading the client's classes.
     */
    static RedisConnection open(RedisSettings settings) {
        RedisURI uri = redisUri(settings);
        for (int attempt = 1; ; attempt++) {
            try {
                StatefulRedisConnection<byte[], byte[]> connection = Shared.CLIENT.connect(ByteArrayCodec.INSTANCE, uri);
                if (!connection.isOpen() && attempt < HANDSHAKE_ATTEMPTS) {
                    // Lettuce may hand back a connection whose channel it closed as it became active
                    // ("endpoint is already closed"): every command would be rejected; connect again
                    connection.close();
                    continue;
                }
                connection.setTimeout(settings.timeout()); // each command's bound
                return new RedisConnection(connection);
            } catch (RedisException e) {
                if (attempt < HANDSHAKE_ATTEMPTS && lostHandshakeCause(e)) continue;
                throw connectFailure(settings, uri, e);
            }
        }
    }

    private static boolean lostHandshakeCause(RedisException e) {
        if (RedisErrors.serverError(e) != null) return false;
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof IllegalStateException) return true;
        }
        return false;
    }

    /** What a failed connection set-up tells the caller: the server's refusal, or why it was not reached. */
    static LockBackendException connectFailure(RedisSettings settings, RedisURI uri, RedisException e) {
        RedisCommandExecutionException refused = RedisErrors.serverError(e);
        if (refused != null) {
            return new LockBackendException("Redis at " + settings.describe() + " refused the connection: "
                    + refused.getMessage() + RedisErrors.advice(refused), RedisErrors.retriable(refused), e);
        }
        return new LockBackendException("cannot connect to Redis at " + settings.describe() + " within "
                + uri.getTimeout().toMillis() + " ms: " + RedisErrors.rootMessage(e)
                + " (is the server up, and host and port right?)", true, e);
    }

    /** The server's address and credentials, with the set-up bound as the URI's timeout. */
    static RedisURI redisUri(RedisSettings settings) {
        Duration setup = settings.timeout().compareTo(SETUP_FLOOR) > 0 ? settings.timeout() : SETUP_FLOOR;
        RedisURI.Builder uri = RedisURI.Builder.redis(settings.host(), settings.port())
                .withDatabase(settings.database())
                .withTimeout(setup); // bounds the set-up of the connection and of every reconnect
        if (settings.password().isPresent()) {
            char[] password = settings.password().get().toCharArray();
            if (settings.user().isPresent()) uri.withAuthentication(settings.user().get(), password);
            else uri.withPassword(password);
        }
        return uri.build();
    }

    /** The client every store shares (also for {@link RedisChangeFeed}'s connection). */
    static RedisClient client() {
        return Shared.CLIENT;
    }

    <T> T run(Command<T> command) {
        return command.run(connection.sync());
    }

    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) connection.close();
    }
}
