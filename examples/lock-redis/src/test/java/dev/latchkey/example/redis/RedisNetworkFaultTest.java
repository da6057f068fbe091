package dev.latchkey.example.redis;

import dev.latchkey.tck.ExternalServer;
import dev.latchkey.tck.NetworkFaultContract;
import dev.latchkey.spi.LockUri;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * The kit's network faults with its {@code FaultProxy} between the holder's Lettuce client and the
 * real server, with a 1 s command timeout so faults show quickly. The server is this class's own, so
 * its restart (a SIGKILL and a start on the same data) touches no other test; with the append-only
 * file fsynced before every reply, leases survive it ({@code leasesSurviveRestart}), and the kit checks
 * that the holder renews on the restarted server while nobody else gets in. {@link RedisCrashTest}
 * checks the same for crashes in more detail, and what a server without AOF would do.
 */
class RedisNetworkFaultTest extends NetworkFaultContract {
    private static Path dir;
    private static String uri;

    @BeforeAll
    static void startServer() throws IOException {
        dir = RedisServer.startAnother();
        uri = RedisServer.uriOf(dir);
    }

    @AfterAll
    static void stopServer() {
        RedisServer.stop(dir);
    }

    @Override
    protected String serverUri() {
        return ExternalServer.withParam(uri, "timeout", "1s");
    }

    @Override
    protected InetSocketAddress server() {
        LockUri parsed = LockUri.parse(uri);
        return new InetSocketAddress(parsed.host(), parsed.port().orElse(6379));
    }

    @Override
    protected ServerFaults serverFaults() {
        return new ServerFaults() {
            @Override public void restart() {
                RedisServer.crashAndResume(dir);
            }

            @Override public boolean leasesSurviveRestart() {
                return true;
            }
        };
    }
}
