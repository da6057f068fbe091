package dev.latchkey.azure;

import static org.assertj.core.api.Assertions.assertThat;

import dev.latchkey.Latchkey;
import dev.latchkey.Lease;
import dev.latchkey.LeaseOptions;
import dev.latchkey.LockManager;
import dev.latchkey.spi.LockUri;
import dev.latchkey.tck.FaultProxy;
import dev.latchkey.tck.NetworkFaultContract;
import java.net.InetSocketAddress;
import java.net.URI;
import java.time.Duration;
import java.util.UUID;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

/** The network fault contract on both modes against Azurite, with a short request timeout so faults show quickly. */
class AzureNetworkFaultTest {

    static InetSocketAddress azurite() {
        URI endpoint = URI.create(LockUri.parse(Azurite.uri()).param("endpoint").orElseThrow());
        return new InetSocketAddress(endpoint.getHost(), endpoint.getPort());
    }

    /**
     * {@code mode=lease}: a renewal of a 15 s lease waits at most 1.5 s, but its release (a renewal,
     * then Release Lease) waits the call timeout: a service that answers each call 2 s late (1 s each
     * way) still gets the key released, not a failed release and a key blocked until the TTL.
     */
    @Test
    void releaseOfALeaseWaitsForASlowServicePastATenthOfItsTtl() throws Exception {
        InetSocketAddress azurite = azurite();
        String uri = Azurite.uri("lease") + "&timeout=5s";
        String key = "slow-release-" + UUID.randomUUID();
        try (FaultProxy proxy = FaultProxy.start(azurite.getHostString(), azurite.getPort());
             LockManager holder = Latchkey.open(proxy.rewrite(uri));
             LockManager contender = Latchkey.open(uri)) {
            Duration ttl = Duration.ofSeconds(15);
            Lease lease = holder.tryAcquire(key, LeaseOptions.ttl(ttl).withoutHeartbeat().withOwner("holder")).orElseThrow();

            proxy.latency(ttl.dividedBy(10).dividedBy(2).plus(Duration.ofMillis(250)));
            lease.release();
            proxy.heal();
            assertThat(contender.tryAcquire(key, LeaseOptions.ttl(ttl).withOwner("next"))).as("a contender right after the release")
                    .isPresent().get().satisfies(Lease::release);
        }
    }

    @Nested
    class LeaseMode extends NetworkFaultContract {
        @Override
        protected String serverUri() {
            return Azurite.withMode(Azurite.uri(), "lease") + "&timeout=2s";
        }

        @Override
        protected InetSocketAddress server() {
            return azurite();
        }

        /** Azure blob leases last 15–60 s. */
        @Override
        protected Duration shortTtl() {
            return Duration.ofSeconds(15);
        }
    }

    @Nested
    class EtagMode extends NetworkFaultContract {
        @Override
        protected String serverUri() {
            return Azurite.withMode(Azurite.uri(), "etag") + "&timeout=1s";
        }

        @Override
        protected InetSocketAddress server() {
            return azurite();
        }
    }
}
