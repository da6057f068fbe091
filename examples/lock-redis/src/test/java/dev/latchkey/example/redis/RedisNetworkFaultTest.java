package dev.latchkey.example.redis;

import dev.latchkey.tck.ExternalServer;
import dev.latchkey.tck.NetworkFaultContract;
import java.net.InetSocketAddress;

/**
 * The kit's network faults with its {@code FaultProxy} between the holder's Lettuce client and the
 * real server, with a 1 s command timeout so faults show quickly.
 *
 * <p>No {@code serverFaults()}: the kit's restart test expects the holder's lease to end with the
 * server (as a session-bound lock's does), while this store keeps the lease through a crash and the
 * holder's heartbeat carries on, so no contender may get in. {@link RedisCrashTest} checks that.
 */
class RedisNetworkFaultTest extends NetworkFaultContract {
    @Override
    protected String serverUri() {
        return ExternalServer.withParam(RedisServer.uri(), "timeout", "1s");
    }

    @Override
    protected InetSocketAddress server() {
        return RedisServer.address();
    }
}
