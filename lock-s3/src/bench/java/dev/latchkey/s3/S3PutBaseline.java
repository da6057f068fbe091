package dev.latchkey.s3;

import dev.latchkey.bench.UploadBaseline;
import dev.latchkey.spi.LockUri;
import software.amazon.awssdk.core.sync.RequestBody;

/**
 * Floor of {@code s3://} for {@code latchkey bench}: two unconditional {@code PutObject}s through
 * the backend's own client (endpoint, path style, credentials, timeouts, retries), each the request
 * a record write sends minus its condition. Bench code: compiled from lock-s3's {@code src/bench}
 * into lock-bench-peers and lock-s3's own tests, never into the lock-s3 jar; it makes its requests
 * itself, so the store keeps only conditional writes.
 */
public final class S3PutBaseline extends UploadBaseline {

    @Override
    public boolean supports(String scheme) {
        return scheme.equals("s3");
    }

    @Override
    protected String upload() {
        return "PutObject";
    }

    @Override
    protected Target target(LockUri uri) {
        S3ConditionalStore store = new S3LockProvider().openStore(uri);
        S3Clients clients = store.clients();
        return new Target() {
            @Override
            public void upload(String leaf, byte[] body) {
                clients.writes().putObject(b -> b.bucket(store.bucket()).key(store.keyPrefix() + leaf)
                        .contentType("application/octet-stream").overrideConfiguration(clients.writeLimits()),
                        RequestBody.fromBytes(body));
            }

            @Override
            public void delete(String leaf) {
                clients.writes().deleteObject(b -> b.bucket(store.bucket()).key(store.keyPrefix() + leaf)
                        .overrideConfiguration(clients.writeLimits()));
            }

            @Override
            public void close() {
                store.close();
            }
        };
    }
}
