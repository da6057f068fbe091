package dev.latchkey.azure;

import com.azure.storage.blob.BlobContainerClient;
import dev.latchkey.LockManager;
import dev.latchkey.spi.LockContext;
import dev.latchkey.spi.LockUri;
import dev.latchkey.spi.UriOptions;
import java.time.Duration;
import java.util.Objects;
import java.util.Set;

/**
 * Lock managers on the application's own {@link BlobContainerClient} (its credential — Azure AD
 * included —, proxy, TLS, pipeline policies and metrics), beside the {@code azblob://} URI route:
 * {@code AzureLocks.open(container, AzureLocks.options().prefix("locks"))}. The options are the
 * URI's own parameters, typed, validated by the same code; the manager is the class the URI opens,
 * on the given client, with the same guarantees ({@code docs/backends/azure.md}).
 *
 * <p>Every call the manager makes carries {@code timeout} (default 5 s), which ends the call then,
 * whatever the client's retry policy is doing; the client's own retries run inside that bound. (The
 * URI route's client tries at most twice; an application's policy with long back-offs makes a call
 * end at {@code timeout} with fewer tries.) Opening sends one read on the client, to start the SDK
 * before the first lock call ({@code docs/backends/azure.md}, "Opening a manager").
 *
 * <p><b>Ownership.</b> {@link LockManager#close()} leaves the client as it found it: the manager
 * holds no connection or thread of its own on it, and the application keeps using it.
 */
public final class AzureLocks {
    /** How keys are locked: the URI's {@code mode}. */
    public enum Mode { LEASE, ETAG }

    private AzureLocks() {}

    /** No option set: the URI's defaults (container root, blob leases, timeout 5 s). */
    public static Options options() {
        return new Options();
    }

    /** A manager on {@code container} with the default context. */
    public static LockManager open(BlobContainerClient container, Options options) {
        return open(container, options, LockContext.defaults());
    }

    /** A manager on {@code container} (which must exist), with a context (clock). */
    public static LockManager open(BlobContainerClient container, Options options, LockContext context) {
        Objects.requireNonNull(container, "container");
        LockUri uri = options.asUri(container.getBlobContainerName()).requireOnly(Set.of("mode", "timeout", "probe"));
        String description = "azblob via the application's BlobContainerClient " + AzureStoreFactory.endpointOf(container)
                + (uri.path().isEmpty() ? "" : uri.path()) + (uri.params().isEmpty() ? "" : " " + uri.params());
        return AzureLockProvider.open(container, uri, description, context);
    }

    /** The URI's own parameters, typed; each is validated when the manager opens, as in a URI. */
    public static final class Options extends UriOptions<Options> {
        private Options() {}

        /** Where in the container the lock blobs live (the URI's path; default the container's root). */
        public Options prefix(String prefix) {
            return path(prefix);
        }

        /** {@code mode}: blob leases (default; TTL 15–60 s) or ETag conditional writes (any TTL). */
        public Options mode(Mode mode) {
            return set("mode", mode);
        }

        /** {@code timeout}: bound of each call, its tries included (default 5 s). */
        public Options timeout(Duration timeout) {
            return set("timeout", timeout);
        }

        /** {@code probe}: in {@code mode=etag}, check once on open that the store honours the conditions (default true). */
        public Options probe(boolean probe) {
            return set("probe", probe);
        }

        LockUri asUri(String container) {
            return toUri("azblob://" + Objects.requireNonNull(container, "container"));
        }
    }
}
