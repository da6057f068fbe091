package dev.latchkey.postgres;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.latchkey.Latchkey;
import dev.latchkey.Lease;
import dev.latchkey.LeaseLostException;
import dev.latchkey.LeaseOptions;
import dev.latchkey.LockManager;
import dev.latchkey.postgres.shared.PgTestSupport;
import dev.latchkey.spi.LockContext;
import dev.latchkey.tck.ExternalServer;
import dev.latchkey.tck.TakeoverWatch;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.testcontainers.DockerClientFactory;
import org.testcontainers.postgresql.PostgreSQLContainer;

/**
 * Faults only a container allows, each under a holder past its TTL, in advisory and lease mode: the
 * holder's lease is lost (its listener fires) before anyone else holds the key, and a contender that
 * polls from the moment of the fault gets it after.
 * <ul>
 *   <li>the server frozen ({@code docker pause}: every server process stopped, connections open,
 *       nothing answered), then thawed;
 *   <li>the holder's network cut ({@code docker network disconnect}): the holder reaches the server on
 *       a network of its own, the contender through the published port, which stays up.
 * </ul>
 * On the {@code containers} route only (skipped on the scripts route, with that reason), on a server
 * of its own so that no other test is frozen or cut off.
 */
class ContainerFaultTest {
    private static final Duration TTL = Duration.ofSeconds(3);
    private static PostgreSQLContainer server; // one for the class, started by its first test

    // per test, not per class: each test is then reported as skipped, with the reason, on the scripts route
    @BeforeEach
    void start() {
        assumeTrue(ExternalServer.containers(), "docker pause and network disconnect need the containers route (-Dlatchkey.test.servers=containers)");
        if (server == null) {
            server = PgTestSupport.newContainer();
            server.start();
        }
    }

    @AfterAll
    static void stop() {
        if (server != null) server.stop();
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"mode=advisory", PgTestSupport.LEASE})
    void aFrozenServerEndsTheLeaseBeforeAnyoneElseHolds(String mode) throws Exception {
        var docker = DockerClientFactory.instance().client();
        String id = server.getContainerId();
        String uri = PgTestSupport.with(PgTestSupport.uri(server), mode + "&timeout=1s");
        faultUnderAHolder(mode, "server frozen (docker pause)", uri, uri,
                () -> docker.pauseContainerCmd(id).exec(), () -> docker.unpauseContainerCmd(id).exec());
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"mode=advisory", PgTestSupport.LEASE})
    void aHolderCutOffFromTheServerLosesTheLeaseBeforeAnyoneElseHolds(String mode) throws Exception {
        var docker = DockerClientFactory.instance().client();
        String id = server.getContainerId();
        String network = "latchkey-test-" + UUID.randomUUID();
        String networkId = docker.createNetworkCmd().withName(network)
                .withLabels(Map.of(ExternalServer.CONTAINER_LABEL, "true")).exec().getId();
        try {
            docker.connectToNetworkCmd().withContainerId(id).withNetworkId(networkId).exec();
            String ip = docker.inspectContainerCmd(id).exec().getNetworkSettings().getNetworks().get(network).getIpAddress();
            String direct = PgTestSupport.with(PgTestSupport.uri(server), mode + "&timeout=1s");
            // the holder's route: the host's own interface on that network, to the server's address on it
            String holder = direct.replace(server.getHost() + ":" + server.getMappedPort(PostgreSQLContainer.POSTGRESQL_PORT),
                    ip + ":" + PostgreSQLContainer.POSTGRESQL_PORT);
            faultUnderAHolder(mode, "holder's network disconnected", holder, direct,
                    () -> docker.disconnectFromNetworkCmd().withContainerId(id).withNetworkId(networkId).withForce(true).exec(),
                    () -> { });
        } finally {
            docker.removeNetworkCmd(networkId).exec();
        }
    }

    /**
     * {@code fault} under a holder on {@code holderUri} past the TTL; {@code heal} once its lease is
     * lost; a contender on {@code contenderUri} polls from the fault on and must hold only after.
     */
    private static void faultUnderAHolder(String mode, String what, String holderUri, String contenderUri, Runnable fault,
            Runnable heal) throws Exception {
        String key = "container-fault/" + UUID.randomUUID();
        try (LockManager holder = Latchkey.open(holderUri, LockContext.defaults());
             LockManager contender = Latchkey.open(contenderUri, LockContext.defaults())) {
            Lease lease = holder.tryAcquire(key, LeaseOptions.ttl(TTL)).orElseThrow();
            CompletableFuture<LeaseLostException> lost = new CompletableFuture<>();
            lease.onLost(lost::complete);
            TakeoverWatch contenderWatch = TakeoverWatch.start(contender, key, lease, LeaseOptions.ttl(TTL.multipliedBy(4)),
                    Duration.ofMillis(50));
            long faultNanos = System.nanoTime();
            fault.run();
            try {
                // the holder must find out on its own, while the fault lasts
                lost.get(TTL.multipliedBy(10).toMillis(), TimeUnit.MILLISECONDS);
            } finally {
                heal.run();
            }
            long lostAfter = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - faultNanos);
            Lease taken = contenderWatch.await(Duration.ofSeconds(60));
            contenderWatch.assertExclusion();
            assertThat(lease.isValid()).isFalse();
            System.out.println("fault-table: ContainerFaultTest " + mode + " | " + what + " past the TTL | onLost by "
                    + lostAfter + " ms after the fault (TTL " + TTL.toMillis() + " ms); the contender held the key after");
            taken.release();
        }
    }
}
