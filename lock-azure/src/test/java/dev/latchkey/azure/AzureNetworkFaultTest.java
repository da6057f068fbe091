package dev.latchkey.azure;

import dev.latchkey.spi.LockUri;
import dev.latchkey.tck.NetworkFaultContract;
import java.net.InetSocketAddress;
import java.net.URI;
import java.time.Duration;
import org.junit.jupiter.api.Nested;

/** The network fault contract on both modes against Azurite, with a short request timeout so faults show quickly. */
class AzureNetworkFaultTest {

    static InetSocketAddress azurite() {
        URI endpoint = URI.create(LockUri.parse(Azurite.uri()).param("endpoint").orElseThrow());
        return new InetSocketAddress(endpoint.getHost(), endpoint.getPort());
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
