package dev.latchkey.gcs;

import com.google.cloud.storage.HttpStorageOptions;
import dev.latchkey.UnsupportedLockUriException;
import dev.latchkey.spi.LockUri;
import java.time.Duration;
import java.util.Set;

/**
 * The store a {@code gs://} URI names ({@link GcsLockProvider} documents its parameters), on a client
 * of the URI's settings or on the options of the application's own ({@link GcsLocks}). A URI that
 * does not describe a usable store is refused with {@link UnsupportedLockUriException} saying what
 * to change; nothing is sent to the store here.
 */
final class GcsStoreFactory {
    private static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(5);

    private GcsStoreFactory() {}

    /** The store a {@code gs://} URI names (validated first; nothing is sent yet). */
    static GcsConditionalStore store(LockUri uri) {
        return store(uri, null);
    }

    /**
     * @param application the options of the application's client (then {@code uri} names bucket,
     *                    prefix, timeout and poll only), or null: the URI's endpoint and project
     *                    with Application Default Credentials
     */
    static GcsConditionalStore store(LockUri uri, HttpStorageOptions application) {
        uri.requireOnly(application == null ? Set.of("project", "endpoint", "timeout", "poll", "probe")
                : Set.of("timeout", "poll", "probe"));
        String bucket = uri.host();
        if (bucket.isEmpty() || uri.user().isPresent() || uri.port().isPresent()) {
            throw new UnsupportedLockUriException("gs:// needs a bucket name and nothing else before the path, e.g. "
                    + "gs://my-bucket/locks (got " + uri + ")");
        }
        String prefix = uri.pathPrefix();
        if (prefix.contains("//")) {
            throw new UnsupportedLockUriException("empty path segment in the prefix of " + uri);
        }
        String endpoint = uri.param("endpoint").map(GcsStoreFactory::trimTrailingSlash).orElse(null);
        if (endpoint != null && !endpoint.matches("(?i)https?://[^/?#@]+")) {
            throw new UnsupportedLockUriException("endpoint must be http(s)://host[:port], got '" + endpoint + "' in " + uri);
        }
        Duration timeout = uri.durationParam("timeout", DEFAULT_TIMEOUT);
        Duration poll = uri.durationParam("poll", GcsLockProvider.DEFAULT_POLL);
        if (timeout.isNegative() || timeout.isZero() || poll.isNegative() || poll.isZero()) {
            throw new UnsupportedLockUriException("timeout and poll must be positive in " + uri);
        }
        return application == null
                ? GcsConditionalStore.open(bucket, prefix, endpoint, uri.param("project").orElse(null), timeout)
                : GcsConditionalStore.open(application, bucket, prefix, application.getHost(), timeout);
    }

    private static String trimTrailingSlash(String s) {
        return s.endsWith("/") ? s.substring(0, s.length() - 1) : s;
    }
}
