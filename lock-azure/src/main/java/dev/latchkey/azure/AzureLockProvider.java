package dev.latchkey.azure;

import com.azure.core.http.policy.HttpPipelinePolicy;
import com.azure.storage.blob.BlobContainerClient;
import dev.latchkey.Capability;
import dev.latchkey.LockManager;
import dev.latchkey.UnsupportedLockUriException;
import dev.latchkey.engine.ConditionalStoreLockManager;
import dev.latchkey.spi.ConditionalStore;
import dev.latchkey.spi.LockContext;
import dev.latchkey.spi.LockProvider;
import dev.latchkey.spi.LockUri;
import java.time.Duration;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;

/**
 * {@code azblob://container/prefix?account=…&endpoint=…&accountKey=…|sas=…&mode=lease|etag} (also
 * {@code azure://}, the scheme Meltano uses). Credentials: {@code accountKey} or {@code sas}
 * (masked in every message), else the {@code AZURE_STORAGE_CONNECTION_STRING} environment variable.
 *
 * <ul>
 *   <li>{@code mode=lease} (default): Azure blob leases, expired by the server's clock; TTL 15–60 s.</li>
 *   <li>{@code mode=etag}: the shared {@link ConditionalStoreLockManager} over ETag conditional writes; any TTL.</li>
 * </ul>
 * Both are safe under any client clock skew: expiry and staleness are judged by the server. Both
 * keep a key in the same blob, and each refuses a blob of the other mode ({@link LockBlobMode}).
 *
 * <p><b>Timeouts.</b> {@code timeout} (default 5 s) bounds each call, all its tries included
 * ({@code maxAttempts}, default 2, of which a second follows only a failure that came fast): inside
 * the safety margin of the default 60 s TTL (12 s), so a renewal that hangs leaves the heartbeat
 * time to try again. {@code mode=lease} cuts each renewal further, to a tenth of the lease's TTL
 * ({@link AzureLease}); {@code mode=etag} cannot (one store serves every TTL), so for
 * TTLs under 25 s choose a {@code timeout} under TTL/5.
 *
 * <p>An application that has configured its own {@code BlobContainerClient} opens a manager on it
 * with {@link AzureLocks}.
 */
public final class AzureLockProvider implements LockProvider {
    private static final Set<String> PARAMS = Set.of("account", "endpoint", "accountKey", "sas", "mode", "timeout", "maxAttempts", "probe");
    private static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(5);
    private static final int DEFAULT_ATTEMPTS = 2;

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
        return open(uri, context, List.of());
    }

    /** As {@link #open(LockUri, LockContext)}, with {@code policies} in the client's HTTP pipeline (tests). */
    static LockManager open(LockUri uri, LockContext context, List<HttpPipelinePolicy> policies) {
        uri.requireOnly(PARAMS);
        mode(uri);
        return open(container(uri, policies), uri, uri.toString(), context);
    }

    /**
     * The one way a manager is made: on the container client a URI's settings built, or on the
     * application's ({@link AzureLocks}); {@code uri} gives the prefix (its path), mode and timeout.
     * The client is warmed up first ({@link AzureStoreFactory#warmUp}).
     */
    static LockManager open(BlobContainerClient container, LockUri uri, String description, LockContext context) {
        String prefix = uri.pathPrefix();
        String mode = mode(uri);
        Duration timeout = timeout(uri);
        AzureStoreFactory.warmUp(container); // the SDK's cold start on a read, not inside the first lock call's bound
        return switch (mode) {
            case LockBlobMode.ETAG -> {
                AzureConditionalStore store = new AzureConditionalStore(container, prefix, timeout, description,
                        uri.booleanParam("probe", true));
                store.probeOnOpen();
                yield new ConditionalStoreLockManager(store, context, EnumSet.of(Capability.SERVER_SIDE_EXPIRY));
            }
            default -> new AzureLeaseLockManager(container, prefix, timeout, description, context);
        };
    }

    private static String mode(LockUri uri) {
        String mode = uri.param("mode", LockBlobMode.LEASE);
        if (!mode.equals(LockBlobMode.LEASE) && !mode.equals(LockBlobMode.ETAG)) {
            throw new UnsupportedLockUriException("mode must be lease or etag, was '" + mode + "': " + uri);
        }
        return mode;
    }

    /** The ETag store alone, for the TCK's CAS contract and {@code latchkey check}. */
    public ConditionalStore openStore(LockUri uri) {
        return etagStore(uri, List.of());
    }

    /** The ETag store of {@code uri}, whatever its mode (the bench floor writes through it). */
    static AzureConditionalStore etagStore(LockUri uri, List<HttpPipelinePolicy> policies) {
        uri.requireOnly(PARAMS);
        // never probed: the kit and latchkey check race its conditions themselves
        return new AzureConditionalStore(container(uri, policies), uri.pathPrefix(), timeout(uri),
                uri.toString(), false);
    }

    private static BlobContainerClient container(LockUri uri, List<HttpPipelinePolicy> policies) {
        return AzureStoreFactory.container(uri, timeout(uri), attempts(uri), policies);
    }

    private static int attempts(LockUri uri) {
        int attempts = uri.intParam("maxAttempts", DEFAULT_ATTEMPTS);
        if (attempts < 1 || attempts > 10) throw new UnsupportedLockUriException("maxAttempts must be 1..10 in " + uri);
        return attempts;
    }

    private static Duration timeout(LockUri uri) {
        Duration t = uri.durationParam("timeout", DEFAULT_TIMEOUT);
        if (t.isNegative() || t.isZero()) throw new UnsupportedLockUriException("timeout must be positive in " + uri);
        return t;
    }
}
