package dev.latchkey.azure;

import dev.latchkey.bench.UploadFloor;
import dev.latchkey.spi.LockUri;
import java.util.List;

/**
 * Floor of {@code azblob://} and {@code azure://} for {@code latchkey bench}, in both modes: two
 * unconditional block-blob uploads (Put Blob) through the backend's own client. Loaded only where
 * lock-bench is on the class path (optional dependency).
 */
public final class AzureUploadFloor extends UploadFloor {

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
        return new Target() {
            @Override public void upload(String leaf, byte[] body) { store.uploadLoose(leaf, body); }
            @Override public void delete(String leaf) { store.deleteLoose(leaf); }
            @Override public void close() { store.close(); }
        };
    }
}
