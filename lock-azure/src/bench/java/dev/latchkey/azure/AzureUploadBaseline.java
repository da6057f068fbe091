package dev.latchkey.azure;

import com.azure.core.util.BinaryData;
import com.azure.core.util.Context;
import com.azure.storage.blob.BlobContainerClient;
import com.azure.storage.blob.options.BlockBlobSimpleUploadOptions;
import dev.latchkey.bench.UploadBaseline;
import dev.latchkey.spi.LockUri;
import java.util.List;

/**
 * Floor of {@code azblob://} and {@code azure://} for {@code latchkey bench}, in both modes: two
 * unconditional block-blob uploads (Put Blob) through the backend's own client, each the request a
 * record write sends (with the mode marker) minus its condition. Bench code: compiled from
 * lock-azure's {@code src/bench} into lock-bench-peers and lock-azure's own tests, never into the
 * lock-azure jar; it makes its requests itself, so the store keeps only conditional writes.
 */
public final class AzureUploadBaseline extends UploadBaseline {

    @Override
    public boolean supports(String scheme) {
        return scheme.equals("azblob") || scheme.equals("azure");
    }

    @Override
    protected String upload() {
        return "block-blob uploads";
    }

    @Override
    protected Target target(LockUri uri) {
        AzureConditionalStore store = AzureLockProvider.etagStore(uri, List.of());
        BlobContainerClient container = store.container();
        return new Target() {
            @Override
            public void upload(String leaf, byte[] body) {
                container.getBlobClient(store.namePrefix() + leaf).getBlockBlobClient().uploadWithResponse(
                        new BlockBlobSimpleUploadOptions(BinaryData.fromBytes(body))
                                .setMetadata(LockBlobMode.marker(LockBlobMode.ETAG)),
                        store.timeout(), Context.NONE);
            }

            @Override
            public void delete(String leaf) {
                container.getBlobClient(store.namePrefix() + leaf)
                        .deleteIfExistsWithResponse(null, null, store.timeout(), Context.NONE);
            }

            @Override
            public void close() {
                store.close();
            }
        };
    }
}
