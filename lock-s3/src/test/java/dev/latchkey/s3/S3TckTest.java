package dev.latchkey.s3;

import static dev.latchkey.tck.ExternalServer.withParam;

import dev.latchkey.Latchkey;
import dev.latchkey.LockManager;
import dev.latchkey.spi.LockContext;
import dev.latchkey.tck.LockManagerContract;
import java.time.Duration;
import java.util.List;

/**
 * The lock contract through {@code s3://} against the real S3 server, with the default staleness
 * of a custom endpoint ({@code observed}); {@code staleness=server}, another spelling of the prefix
 * and other client settings must exclude it on the same keys.
 */
class S3TckTest extends LockManagerContract {
    @Override
    protected LockManager newManager(LockContext context) {
        return Latchkey.open(S3Server.uri(), context);
    }

    /** Date and Last-Modified have one-second resolution, and the store lowers ages by a second. */
    @Override
    protected Duration shortTtl() {
        return Duration.ofSeconds(3);
    }

    @Override
    protected String uriForOtherProcesses() {
        return S3Server.uri();
    }

    /** A lock is bucket + prefix + key: nothing else in the URI may let two clients of one key both hold it. */
    @Override
    protected List<OtherConfiguration> otherConfigurations() {
        String uri = S3Server.uri();
        int query = uri.indexOf('?');
        return List.of(
                other("staleness=server", withParam(uri, "staleness", "server")),
                other("the prefix with a trailing slash", uri.substring(0, query) + "/" + uri.substring(query)),
                other("timeout=10s&maxAttempts=1", withParam(withParam(uri, "timeout", "10s"), "maxAttempts", "1")));
    }

    private static OtherConfiguration other(String name, String uri) {
        return new OtherConfiguration() {
            @Override public String name() { return name; }
            @Override public LockManager open(LockContext context) { return Latchkey.open(uri, context); }
        };
    }
}
