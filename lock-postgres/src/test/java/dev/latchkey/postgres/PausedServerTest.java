package dev.latchkey.postgres;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.latchkey.Latchkey;
import dev.latchkey.Lease;
import dev.latchkey.LeaseLostException;
import dev.latchkey.LeaseOptions;
import dev.latchkey.LockManager;
import dev.latchkey.spi.LockContext;
import dev.latchkey.tck.ExternalServer;
import dev.latchkey.tck.TakeoverWatch;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.testcontainers.DockerClientFactory;
import org.testcontainers.postgresql.PostgreSQLContainer;

/**
 * A server frozen under a holder past its TTL ({@code docker pause}: every server process stopped,
 * connections open, nothing answered), a fault only a container allows: the holder's lease is lost
 * (its listener fires) before anyone else holds the key, and a contender that polls from the moment
 * of the fault gets it once the server thaws. On the {@code containers} route only (it is skipped on
 * the scripts route, with that reason), on a server of its own so that no other test is frozen.
 */
class PausedServerTest {
    private static final Duration TTL = Duration.ofSeconds(3);
    private static PostgreSQLContainer server;

    @BeforeAll
    static void start() {
        assumeTrue(ExternalServer.containers(), "docker pause needs the containers route (-Dlatchkey.test.servers=containers)");
        server = PgTestSupport.newContainer();
        server.start();
    }

    @AfterAll
    static void stop() {
        if (server != null) server.stop();
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"mode=advisory", PgTestSupport.LEASE})
    void aFrozenServerEndsTheLeaseBeforeAnyoneElseHolds(String mode) throws Exception {
        String uri = PgTestSupport.with(PgTestSupport.uri(server), mode + "&timeout=1s");
        String key = "paused/" + UUID.randomUUID();
        try (LockManager holder = Latchkey.open(uri, LockContext.defaults());
             LockManager contender = Latchkey.open(uri, LockContext.defaults())) {
            Lease lease = holder.tryAcquire(key, LeaseOptions.ttl(TTL)).orElseThrow();
            CompletableFuture<LeaseLostException> lost = new CompletableFuture<>();
            lease.onLost(lost::complete);
            TakeoverWatch contenderWatch = TakeoverWatch.start(contender, key, lease, LeaseOptions.ttl(TTL.multipliedBy(4)),
                    Duration.ofMillis(50));
            long fault = System.nanoTime();
            var docker = DockerClientFactory.instance().client();
            docker.pauseContainerCmd(server.getContainerId()).exec();
            try {
                // the holder must find out on its own while the server is still frozen
                lost.get(TTL.multipliedBy(10).toMillis(), TimeUnit.MILLISECONDS);
            } finally {
                docker.unpauseContainerCmd(server.getContainerId()).exec();
            }
            long lostAfter = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - fault);
            Lease taken = contenderWatch.await(Duration.ofSeconds(60));
            contenderWatch.assertExclusion();
            assertThat(lease.isValid()).isFalse();
            System.out.println("fault-table: PausedServerTest " + mode + " | server frozen (docker pause) past the TTL | onLost by "
                    + lostAfter + " ms after the fault (TTL " + TTL.toMillis() + " ms); the contender held the key after the thaw");
            taken.release();
        }
    }
}
