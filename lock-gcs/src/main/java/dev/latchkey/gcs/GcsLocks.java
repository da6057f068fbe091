package dev.latchkey.gcs;

import com.google.cloud.storage.HttpStorageOptions;
import com.google.cloud.storage.Storage;
import dev.latchkey.LockManager;
import dev.latchkey.UnsupportedLockUriException;
import dev.latchkey.spi.LockContext;
import dev.latchkey.spi.LockUri;
import dev.latchkey.spi.UriOptions;
import java.time.Duration;
import java.util.Objects;

/**
 * Lock managers on the configuration of the application's own {@link Storage} (its credentials,
 * project, host, telemetry, and HTTP transport: proxy, TLS), beside the {@code gs://} URI route:
 * {@code GcsLocks.open(storage, "my-bucket", GcsLocks.options().prefix("locks"))}. The options are
 * the URI's own parameters, typed, validated by the same code; the manager is the one the URI opens,
 * with the same guarantees ({@code docs/backends/gcs.md}).
 *
 * <p>The manager sends its requests through two clients of its own built from
 * {@code storage.getOptions()}, not through {@code storage} itself: the protocol needs its own
 * request timeouts and retries (one retry; none after a 429 on a write) and reads the server's
 * {@code Date} from the transport. Only the HTTP (JSON API) client qualifies: a gRPC
 * {@code Storage} is refused.
 *
 * <p><b>Ownership.</b> {@link LockManager#close()} closes the manager's two clients and never the
 * application's {@code storage}.
 */
public final class GcsLocks {
    private GcsLocks() {}

    /** No option set: the URI's defaults (bucket root, timeout 5 s, poll 100 ms). */
    public static Options options() {
        return new Options();
    }

    /** A manager on {@code storage}'s configuration, locking in {@code bucket}, with the default context. */
    public static LockManager open(Storage storage, String bucket, Options options) {
        return open(storage, bucket, options, LockContext.defaults());
    }

    /**
     * A manager on {@code storage}'s configuration, locking in {@code bucket} (which must exist).
     *
     * @throws UnsupportedLockUriException for a gRPC client, or an invalid bucket or option
     */
    public static LockManager open(Storage storage, String bucket, Options options, LockContext context) {
        if (!(Objects.requireNonNull(storage, "storage").getOptions() instanceof HttpStorageOptions http)) {
            throw new UnsupportedLockUriException("GcsLocks needs an HTTP (JSON API) Storage client, built with"
                    + " StorageOptions.http(); a gRPC client cannot report the server's Date the lock ages records by");
        }
        return GcsLockProvider.open(options.asUri(bucket), http, context);
    }

    /** The URI's own parameters, typed; each is validated when the manager opens, as in a URI. */
    public static final class Options extends UriOptions<Options> {
        private Options() {}

        /** Where in the bucket the lock objects live (the URI's path; default the bucket's root). */
        public Options prefix(String prefix) {
            return path(prefix);
        }

        /** {@code timeout}: per-request connect and read timeout (default 5 s; keep it under TTL/10). */
        public Options timeout(Duration timeout) {
            return set("timeout", timeout);
        }

        /** {@code poll}: longest pause between looks at a held lock while waiting (default 100 ms). */
        public Options poll(Duration poll) {
            return set("poll", poll);
        }

        /** {@code probe}: check the store's preconditions once on open (default true; see {@link GcsLockProvider}). */
        public Options probe(boolean probe) {
            return set("probe", probe);
        }

        LockUri asUri(String bucket) {
            return toUri("gs://" + Objects.requireNonNull(bucket, "bucket"));
        }
    }
}
