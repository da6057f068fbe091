package dev.latchkey.gcs;

import com.google.cloud.storage.BlobId;
import com.google.cloud.storage.Storage;
import dev.latchkey.bench.UploadBaseline;
import dev.latchkey.spi.LockUri;

/**
 * Floor of {@code gs://} for {@code latchkey bench}: two unconditional uploads, each the very
 * request a record write sends (body plus the record in metadata) minus {@code ifGenerationMatch},
 * through the backend's own write client (endpoint, credentials, timeouts, no retry of a 429) and
 * spaced by GCS's per-object write rate as the store's writes are. Bench code: compiled from
 * lock-gcs's {@code src/bench} into lock-bench-peers and lock-gcs's own tests, never into the
 * lock-gcs jar; it makes its requests itself, so the store keeps only conditional writes.
 */
public final class GcsUploadBaseline extends UploadBaseline {

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
        GcsConditionalStore store = GcsStoreFactory.store(uri);
        Storage client = store.writeClient();
        WriteSpacing spacing = new WriteSpacing();
        return new Target() {
            @Override
            public void upload(String leaf, byte[] body) {
                BlobId id = store.besideRecords(leaf);
                spacing.spaced(id.getName(), id.toGsUtilUri(), () -> GcsConditionalStore.sendRecord(client, id, body));
            }

            @Override
            public void delete(String leaf) {
                BlobId id = store.besideRecords(leaf);
                spacing.spaced(id.getName(), id.toGsUtilUri(), () -> client.delete(id));
            }

            @Override
            public void close() {
                store.close();
            }
        };
    }
}
