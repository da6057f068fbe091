package dev.latchkey.s3;

import static dev.latchkey.tck.ExternalServer.withParam;

import dev.latchkey.spi.ConditionalStore;
import dev.latchkey.tck.StoreFaultContract;

/**
 * The fault contract — lost replies, refused writes, SDK retries that landed, slow claims, failed
 * releases, a hung renewal, random faults under contention — over the real S3 store against the
 * test server, with {@code staleness=server}: the mode in which the store itself computes a record's
 * age ({@code Date} − {@code Last-Modified}), so a takeover let in early by an overstated age would
 * show here. (The lock contract, {@link S3TckTest}, runs the endpoint's default, {@code observed}.)
 */
class S3StoreFaultTest extends StoreFaultContract {
    @Override
    protected ConditionalStore newStore() {
        return S3Server.newStore(withParam(S3Server.uri(), "staleness", "server"));
    }
}
