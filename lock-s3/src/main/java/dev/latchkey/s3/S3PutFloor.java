package dev.latchkey.s3;

import dev.latchkey.bench.UploadFloor;
import dev.latchkey.spi.LockUri;

/**
 * Floor of {@code s3://} for {@code latchkey bench}: two unconditional {@code PutObject}s through
 * the backend's own client (endpoint, path style, credentials, timeouts, retries). Loaded only where
 * lock-bench is on the class path (optional dependency).
 */
public final class S3PutFloor extends UploadFloor {

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
        return new Target() {
            @Override public void upload(String leaf, byte[] body) { store.putLoose(leaf, body); }
            @Override public void delete(String leaf) { store.deleteLoose(leaf); }
            @Override public void close() { store.close(); }
        };
    }
}
