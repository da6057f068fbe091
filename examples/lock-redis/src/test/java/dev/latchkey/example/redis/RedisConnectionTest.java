package dev.latchkey.example.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.latchkey.LockBackendException;
import dev.latchkey.spi.LockUri;
import dev.latchkey.tck.ExternalServer;
import dev.latchkey.tck.FaultProxy;
import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Commands are bounded by the URI's {@code timeout}, not by the longer set-up allowance of a
 * connection, and their failure under a partition is a retriable {@link LockBackendException}.
 */
class RedisConnectionTest {
    @Test
    void aCommandUnderAPartitionFailsAfterTheUrisTimeoutNotTheSetUpsTen() throws Exception {
        InetSocketAddress server = RedisServer.address();
        try (FaultProxy proxy = FaultProxy.start(server.getHostString(), server.getPort());
             RedisConditionalStore store = RedisLockProvider.openStore(LockUri.parse(
                     proxy.rewrite(ExternalServer.withParam(RedisServer.uri(), "timeout", "300ms"))))) {
            store.read("warm-up");
            proxy.blackhole();
            long start = System.nanoTime();
            assertThatThrownBy(() -> store.read("partitioned"))
                    .isInstanceOf(LockBackendException.class)
                    .hasMessageContaining("timed out")
                    .satisfies(e -> assertThat(((LockBackendException) e).isRetriable()).isTrue());
            // 300 ms asked; the set-up's 10 s would mean the URI's timeout was not applied
            assertThat(System.nanoTime() - start).isLessThan(TimeUnit.SECONDS.toNanos(9));
        }
    }
}
