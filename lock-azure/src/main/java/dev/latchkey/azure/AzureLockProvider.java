package dev.latchkey.azure;

import com.azure.storage.blob.BlobContainerClient;
import dev.latchkey.Capability;
import dev.latchkey.LockManager;
import dev.latchkey.UnsupportedLockUriException;
import dev.latchkey.engine.LeaseEngine;
import dev.latchkey.spi.ConditionalStore;
import dev.latchkey.spi.LockContext;
import dev.latchkey.spi.LockProvider;
import dev.latchkey.spi.LockUri;
import java.time.Duration;
import java.util.EnumSet;
import java.util.Set;

/**
 * {@code azblob://container/prefix?account=…&endpoint=…&accountKey=…|sas=…&mode=lease|etag} (also
 * {@code azure://}, the scheme Meltano uses). Credentials: {@code accountKey} or {@code sas}
 * (masked in every message), else the {@code AZURE_STORAGE_CONNECTION_STRING} environment variable.
 *
 * <ul>
 *   <li>{@code mode=lease} (default): Azure blob leases, expired by the server's clock; TTL 15–60 s.</li>
 *   <li>{@code mode=etag}: the shared {@link LeaseEngine} over ETag conditional writes; any TTL.</li>
 * </ul>
 * Both are safe under any client clock skew: expiry and staleness are judged by the server.
 */
public final class AzureLockProvider implements LockProvider {
    private static final Set<String> PARAMS = Set.of("account", "endpoint", "accountKey", "sas", "mode", "timeout", "maxAttempts");
    private static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(5);

    @Override
    public Set<String> schemes() {
        return Set.of("azblob", "azure");
    }

    @Override
    public String description() {
        return "Azure Blob Storage: blob leases (mode=lease, default) or ETag conditional writes (mode=etag)";
    }

    @Override
    public LockManager open(LockUri uri, LockContext context) {
        uri.requireOnly(PARAMS);
        String mode = uri.param("mode", "lease");
        switch (mode) {
            case "etag":
                return new LeaseEngine(openStore(uri), context, EnumSet.of(Capability.SERVER_SIDE_EXPIRY));
            case "lease":
                return new AzureLeaseManager(container(uri), AzureBlobs.trimSlashes(uri.path()), timeout(uri),
                        uri.toString(), context);
            default:
                throw new UnsupportedLockUriException("mode must be lease or etag, was '" + mode + "': " + uri);
        }
    }

    /** The ETag store alone, for the TCK's CAS contract and {@code latchkey check}. */
    public ConditionalStore openStore(LockUri uri) {
        return etagStore(uri);
    }

    /** The ETag store of {@code uri}, whatever its mode (the bench floor writes through it). */
    static AzureConditionalStore etagStore(LockUri uri) {
        uri.requireOnly(PARAMS);
        return new AzureConditionalStore(container(uri), AzureBlobs.trimSlashes(uri.path()), timeout(uri), uri.toString());
    }

    private static BlobContainerClient container(LockUri uri) {
        int attempts = uri.intParam("maxAttempts", 2);
        if (attempts < 1 || attempts > 10) throw new UnsupportedLockUriException("maxAttempts must be 1..10 in " + uri);
        return AzureBlobs.container(uri, timeout(uri), attempts);
    }

    private static Duration timeout(LockUri uri) {
        return uri.durationParam("timeout", DEFAULT_TIMEOUT);
    }
}
