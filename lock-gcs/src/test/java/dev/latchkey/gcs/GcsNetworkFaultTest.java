package dev.latchkey.gcs;

import dev.latchkey.spi.LockUri;
import dev.latchkey.tck.ExternalServer;
import dev.latchkey.tck.NetworkFaultContract;
import java.net.InetSocketAddress;
import java.net.URI;

/** The network fault contract on {@code gs://} against the test server, with a short request timeout so faults show quickly. */
class GcsNetworkFaultTest extends NetworkFaultContract {
    @Override
    protected String serverUri() {
        return ExternalServer.withParam(GcsFixture.uri(), "timeout", "1s");
    }

    @Override
    protected InetSocketAddress server() {
        URI endpoint = URI.create(LockUri.parse(GcsFixture.uri()).param("endpoint").orElseThrow());
        return new InetSocketAddress(endpoint.getHost(), endpoint.getPort());
    }
}
