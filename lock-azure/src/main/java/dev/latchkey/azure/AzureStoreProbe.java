package dev.latchkey.azure;

import com.azure.storage.blob.models.BlobRequestConditions;
import dev.latchkey.LockBackendException;
import dev.latchkey.spi.StoreProbe;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;

/**
 * The check a {@code mode=etag} manager makes of its store once, when it opens (or, if the store
 * cannot be reached then, before its first request): that the store honours the two conditions
 * every lock of that mode rests on. On one fresh blob under {@code <prefix>/.latchkey-probe/} (never
 * listed as a lock: no {@code .lock} suffix) it creates with {@code If-None-Match: *}, creates again,
 * replaces with the current ETag, replaces with the stale one, and deletes.
 *
 * <p><b>Guarantee.</b> A store that let the second create or the stale replace land is refused with
 * a non-retriable {@link StoreProbe.Untrusted} naming the container and what it
 * ignored: an emulator or a proxy that drops the conditions gives no exclusion, and nothing else in
 * the backend would notice. A probe that cannot finish (the store unreachable, a create of a fresh
 * blob or a replace with its current ETag refused) throws a retriable one and runs again before the
 * next request: no request of a lock is sent before a probe has passed. Passing proves the
 * conditions are <em>checked</em>, not that they are atomic under a race: that is what
 * {@code latchkey check} races for. Azure Blob Storage and Azurite pass it.
 *
 * <p><b>Cost.</b> Five requests, one round trip each. {@code probe=false} skips it, for stores
 * already vetted by {@code latchkey check}.
 */
final class AzureStoreProbe {
    private static final System.Logger LOG = System.getLogger(AzureStoreProbe.class.getName());

    private AzureStoreProbe() {}

    /** @throws LockBackendException if the store ignored or refused a condition (or could not be reached) */
    static void run(AzureConditionalStore store) {
        String blob = store.probeBlob(UUID.randomUUID().toString());
        List<String> ignored = new ArrayList<>();
        String v1 = store.upload(blob, bytes("first"), new BlobRequestConditions().setIfNoneMatch("*"))
                .orElseThrow(() -> busy(store, "a create (If-None-Match: *) of a fresh blob " + blob + " was refused"));
        Optional<String> v2 = Optional.empty();
        try {
            if (store.upload(blob, bytes("second create"), new BlobRequestConditions().setIfNoneMatch("*")).isPresent()) {
                ignored.add("If-None-Match: * (a second create of one blob succeeded)");
            }
            v2 = store.upload(blob, bytes("replace"), new BlobRequestConditions().setIfMatch(v1));
            if (v2.isEmpty() && ignored.isEmpty()) {
                throw busy(store, "a replace with the blob's current ETag was refused");
            }
            if (store.upload(blob, bytes("stale replace"), new BlobRequestConditions().setIfMatch(v1)).isPresent()) {
                ignored.add("If-Match (a replace with a stale ETag succeeded)");
            }
        } finally {
            cleanUp(store, blob);
        }
        if (!ignored.isEmpty()) {
            throw new StoreProbe.Untrusted("the Azure Blob store " + store.where() + " ignores " + String.join(" and ", ignored)
                    + ": it cannot hold locks in mode=etag (two holders could both get one). Use a store whose conditional"
                    + " writes are checked (latchkey check races them); probe=false skips this check");
        }
    }

    /**
     * Deletes the probe's blob, unconditionally: whatever the probe left there is the probe's own. Best
     * effort: a credential that may not delete leaves one small blob behind per probe rather than
     * refusing a store that can hold locks.
     */
    private static void cleanUp(AzureConditionalStore store, String blob) {
        try {
            store.deleteProbeBlob(blob);
        } catch (LockBackendException e) {
            LOG.log(System.Logger.Level.WARNING, "could not delete the probe's blob " + blob + " in " + store.where()
                    + " (grant delete, or set probe=false): " + e.getMessage());
        }
    }

    /** Not a verdict: throttling and leases refuse writes too, so the probe runs again on the next call. */
    private static LockBackendException busy(AzureConditionalStore store, String what) {
        return new LockBackendException("the probe of the Azure Blob store " + store.where() + " could not finish: " + what
                + " (throttling, or a lease on the blob); probe=false skips this check", true);
    }

    private static byte[] bytes(String what) {
        return ("latchkey probe: " + what + " " + UUID.randomUUID()).getBytes(StandardCharsets.UTF_8);
    }
}
