package dev.latchkey.example.redis;

import dev.latchkey.spi.LockUri;
import dev.latchkey.tck.ExternalServer;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The Redis server of this JVM's tests: {@code LATCHKEY_TEST_REDIS_URI} if set, else one started
 * once by {@code scripts/redis.sh start} (stopped at JVM exit). Never skips: a missing
 * {@code redis-server} fails the tests that need it.
 */
final class RedisServer {
    private static final String ENV = "LATCHKEY_TEST_REDIS_URI";
    private static Path stateDir;
    private static String uri;

    private RedisServer() {}

    static synchronized String uri() {
        if (uri == null) {
            String fromEnv = System.getenv(ENV);
            uri = fromEnv != null && !fromEnv.isBlank() ? fromEnv.trim() : start();
        }
        return uri;
    }

    static InetSocketAddress address() {
        LockUri parsed = LockUri.parse(uri());
        return new InetSocketAddress(parsed.host(), parsed.port().orElse(6379));
    }

    /** Another server from the script, for tests that reconfigure it; the caller stops it with {@link #stop}. */
    static Path startAnother() throws IOException {
        Path dir = Files.createTempDirectory("latchkey-redis-");
        ExternalServer.script("redis", "start", dir.toString());
        return dir;
    }

    static String uriOf(Path dir) throws IOException {
        return Files.readString(dir.resolve("uri")).trim();
    }

    /**
     * Kills the server in {@code dir} with SIGKILL and starts it again on the same port and data: a
     * crash, recovered from whatever its append-only file holds.
     */
    static void crashAndResume(Path dir) {
        ExternalServer.script("redis", "crash", dir.toString());
        ExternalServer.script("redis", "resume", dir.toString());
    }

    static void stop(Path dir) {
        ExternalServer.script("redis", "stop", dir.toString());
    }

    private static String start() {
        try {
            stateDir = Files.createTempDirectory("latchkey-redis-");
        } catch (IOException e) {
            throw new IllegalStateException("cannot create a state directory for Redis", e);
        }
        String started;
        try {
            started = ExternalServer.script("redis", "start", stateDir.toString());
        } catch (IllegalStateException e) {
            throw new IllegalStateException("no Redis server: set " + ENV + " to an existing one, or make "
                    + "scripts/redis.sh start work (apt-get install -y redis-server)", e);
        }
        Path dir = stateDir;
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                ExternalServer.script("redis", "stop", dir.toString());
            } catch (RuntimeException ignored) {
                // the JVM is exiting; the script's own cleanup is best effort
            }
        }, "stop-redis"));
        return started;
    }
}
