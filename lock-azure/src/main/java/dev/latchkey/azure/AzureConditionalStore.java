package dev.latchkey.azure;

import com.azure.core.http.HttpHeaderName;
import com.azure.core.util.BinaryData;
import com.azure.core.util.Context;
import com.azure.storage.blob.BlobContainerClient;
import com.azure.storage.blob.models.BlobDownloadContentResponse;
import com.azure.storage.blob.models.BlobDownloadHeaders;
import com.azure.storage.blob.models.BlobItem;
import com.azure.storage.blob.models.BlobRequestConditions;
import com.azure.storage.blob.models.BlobStorageException;
import com.azure.storage.blob.models.ListBlobsOptions;
import com.azure.storage.blob.options.BlockBlobSimpleUploadOptions;
import dev.latchkey.spi.ConditionalStore;
import dev.latchkey.spi.StoreProbe;
import dev.latchkey.spi.StoredRecord;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * A {@link ConditionalStore} over one Azure Blob container and prefix ({@code mode=etag}): each
 * record is the block blob {@code <prefix>/<name>.lock}, its version the blob's ETag.
 *
 * <p><b>Guarantee.</b> Create is an upload with {@code If-None-Match: *}, replace an upload with
 * {@code If-Match: <etag>}, delete a delete with {@code If-Match}; Azure applies these conditions
 * atomically, so of racing writers exactly one wins (the TCK's CAS contract checks it). 412 and 409
 * mean "lost the race", 404 on a conditional write means "gone". Other failures are
 * {@link dev.latchkey.LockBackendException}s naming the container, retriable for 5xx, throttling,
 * timeouts and I/O errors. A retried write whose first attempt landed answers 412; the lease engine
 * re-reads and recognises its own lease id, so that is never mistaken for a lost race.
 *
 * <p><b>Mode.</b> Every upload carries the {@code mode=etag} marker, and a read of a blob that
 * {@code mode=lease} made or claims fails with {@link LockBlobMode#mismatch} (never "not a lease
 * record"), so a {@code mode=lease} client on the same prefix is refused, not raced. A blob lease
 * taken by such a client for a moment (before it sees the marker and gives the lease back) makes our
 * writes answer 412, which reads as "not written": the engine re-reads and decides, as for any
 * refused write.
 *
 * <p><b>Age</b> is the response's {@code Date} minus the blob's {@code Last-Modified}, both from the
 * server, lowered by their one-second resolution.
 */
final class AzureConditionalStore implements ConditionalStore {
    private static final String SUFFIX = ".lock";
    private static final Map<String, String> ETAG_MARKER = LockBlobMode.marker(LockBlobMode.ETAG);

    private final BlobContainerClient container;
    private final String base;
    private final Duration timeout;
    private final String where;
    private final String description;
    /** The store's check before its first request ({@link AzureStoreProbe}), or none. */
    private final StoreProbe probe;

    /** @param probe whether a manager on this store probes it first ({@link AzureStoreProbe}) */
    AzureConditionalStore(BlobContainerClient container, String prefix, Duration timeout, String description, boolean probe) {
        this.probe = probe ? StoreProbe.of(() -> AzureStoreProbe.run(this)) : StoreProbe.skipped();
        this.container = Objects.requireNonNull(container, "container");
        this.base = prefix.isEmpty() ? "" : prefix + "/";
        this.timeout = timeout;
        this.where = "container " + container.getBlobContainerName() + " at " + AzureStoreFactory.endpointOf(container);
        this.description = description;
    }

    String blobName(String name) {
        return base + name + SUFFIX;
    }

    /** Probes the store now, when a manager opens ({@link StoreProbe#checkOnOpen}). */
    void probeOnOpen() {
        probe.checkOnOpen();
    }

    /** Blob {@code leaf} in the probe's folder, which {@link #list} never shows (no {@code .lock} suffix, a deeper folder). */
    String probeBlob(String leaf) {
        return base + ".latchkey-probe/" + leaf;
    }

    /** An unconditional delete of the probe's blob: what the probe left there is its own. */
    void deleteProbeBlob(String blob) {
        try {
            container.getBlobClient(blob).deleteIfExistsWithResponse(null, null, timeout, Context.NONE);
        } catch (RuntimeException e) {
            throw AzureErrors.failure("delete", blob, where, e);
        }
    }

    /** The container and endpoint, for messages (never a credential). */
    String where() {
        return where;
    }

    @Override
    public Optional<StoredRecord> read(String name) {
        probe.check();
        String blob = blobName(name);
        try {
            BlobDownloadContentResponse r = container.getBlobClient(blob)
                    .downloadContentWithResponse(null, null, timeout, Context.NONE);
            BlobDownloadHeaders h = r.getDeserializedHeaders();
            byte[] data = r.getValue().toBytes();
            if (LockBlobMode.isLeaseBlob(h.getMetadata(), h.getLeaseState(), data.length)) {
                throw LockBlobMode.mismatch(blob, where, LockBlobMode.LEASE, LockBlobMode.ETAG);
            }
            return Optional.of(new StoredRecord(data, h.getETag(),
                    AzureErrors.age(r.getHeaders().getValue(HttpHeaderName.DATE), h.getLastModified())));
        } catch (BlobStorageException e) {
            if (AzureErrors.blobMissing(e)) return Optional.empty();
            throw AzureErrors.failure("download", blob, where, e);
        } catch (RuntimeException e) {
            throw AzureErrors.failure("download", blob, where, e);
        }
    }

    @Override
    public Optional<String> create(String name, byte[] data) {
        probe.check();
        return upload(blobName(name), data, new BlobRequestConditions().setIfNoneMatch("*"));
    }

    @Override
    public Optional<String> replace(String name, String expectedVersion, byte[] data) {
        Objects.requireNonNull(expectedVersion, "expectedVersion");
        probe.check();
        return upload(blobName(name), data, new BlobRequestConditions().setIfMatch(expectedVersion));
    }

    /** One conditional upload: the new ETag, or empty when the condition failed (412, 409, 404). */
    Optional<String> upload(String blob, byte[] data, BlobRequestConditions conditions) {
        try {
            return Optional.of(put(blob, data, conditions));
        } catch (BlobStorageException e) {
            if (lostRace(e)) return Optional.empty();
            throw AzureErrors.failure("conditional upload", blob, where, e);
        } catch (RuntimeException e) {
            throw AzureErrors.failure("conditional upload", blob, where, e);
        }
    }

    /** One block-blob upload (Put Blob) of {@code data} with the mode marker; returns the new ETag. */
    private String put(String blob, byte[] data, BlobRequestConditions conditions) {
        return container.getBlobClient(blob).getBlockBlobClient().uploadWithResponse(
                new BlockBlobSimpleUploadOptions(BinaryData.fromBytes(data)).setRequestConditions(conditions)
                        .setMetadata(ETAG_MARKER),
                timeout, Context.NONE).getValue().getETag();
    }

    /**
     * The container, name prefix and timeout, for requests that are not this store's: the bench floor
     * (in lock-azure's src/bench, never in this jar) writes its own blobs beside the records with them.
     */
    BlobContainerClient container() {
        return container;
    }

    /** {@code ""} or {@code "prefix/"}: what every blob name of this store starts with. */
    String namePrefix() {
        return base;
    }

    Duration timeout() {
        return timeout;
    }

    @Override
    public boolean delete(String name, String expectedVersion) {
        Objects.requireNonNull(expectedVersion, "expectedVersion");
        probe.check();
        String blob = blobName(name);
        try {
            container.getBlobClient(blob).deleteWithResponse(null, new BlobRequestConditions().setIfMatch(expectedVersion),
                    timeout, Context.NONE);
            return true;
        } catch (BlobStorageException e) {
            if (lostRace(e)) return false;
            throw AzureErrors.failure("conditional delete", blob, where, e);
        } catch (RuntimeException e) {
            throw AzureErrors.failure("conditional delete", blob, where, e);
        }
    }

    @Override
    public List<String> list(String namePrefix) {
        probe.check();
        List<String> names = new ArrayList<>();
        try {
            for (BlobItem item : container.listBlobs(new ListBlobsOptions().setPrefix(base + namePrefix), timeout)) {
                String b = item.getName();
                if (b.endsWith(SUFFIX) && b.indexOf('/', base.length()) < 0) {
                    names.add(b.substring(base.length(), b.length() - SUFFIX.length()));
                }
            }
        } catch (RuntimeException e) {
            throw AzureErrors.failure("list", base + namePrefix, where, e);
        }
        return names;
    }

    @Override
    public String describe() {
        return description;
    }

    @Override
    public void close() {
        // the SDK's HTTP client holds no resources that need closing here
    }

    /** 412: condition failed; 409: exists (create) or a conflicting operation; 404: gone. */
    private static boolean lostRace(BlobStorageException e) {
        int s = e.getStatusCode();
        return s == 412 || s == 409 || AzureErrors.blobMissing(e);
    }
}
