package dev.latchkey.gcs;

import dev.latchkey.bench.UploadFloor;
import dev.latchkey.spi.LockUri;

/**
 * Floor of {@code gs://} for {@code latchkey bench}: two unconditional uploads, each the very
 * request a record write sends (body plus the record in metadata) minus {@code ifGenerationMatch},
 * through the backend's own client (endpoint, credentials, timeouts, one retry). Bench code:
 * compiled from lock-gcs's {@code src/bench} into lock-bench-peers and lock-gcs's own tests, never
 * into the lock-gcs jar.
 */
public final class GcsUploadFloor extends UploadFloor {

    @Override
    public boolean supports(String scheme) {
        return scheme.equals("gs");
    }

    @Override
    protected String upload() {
        return "uploads";
    }

    @Override
    protected Target target(LockUri uri) {
        GcsConditionalStore store = GcsLockProvider.store(uri);
        return new Target() {
            @Override public void upload(String leaf, byte[] body) { store.uploadLoose(leaf, body); }
            @Override public void delete(String leaf) { store.deleteLoose(leaf); }
            @Override public void close() { store.close(); }
        };
    }
}
