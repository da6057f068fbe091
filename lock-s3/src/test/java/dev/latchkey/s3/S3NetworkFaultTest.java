package dev.latchkey.s3;

import dev.latchkey.spi.LockUri;
import dev.latchkey.tck.ExternalServer;
import dev.latchkey.tck.NetworkFaultContract;
import java.net.InetSocketAddress;
import java.net.URI;

/** The network fault contract on {@code s3://} against the test server, with a short request timeout so faults show quickly. */
class S3NetworkFaultTest extends NetworkFaultContract {
    @Override
    protected String serverUri() {
        return ExternalServer.withParam(ExternalServer.withParam(S3Server.uri(), "timeout", "1s"), "maxAttempts", "1");
    }

    @Override
    protected InetSocketAddress server() {
        URI endpoint = URI.create(LockUri.parse(S3Server.uri()).param("endpoint").orElseThrow());
        return new InetSocketAddress(endpoint.getHost(), endpoint.getPort());
    }
}
