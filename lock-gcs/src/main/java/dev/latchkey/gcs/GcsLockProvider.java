package dev.latchkey.gcs;

import com.google.cloud.storage.HttpStorageOptions;
import dev.latchkey.Capability;
import dev.latchkey.LockManager;
import dev.latchkey.UnsupportedLockUriException;
import dev.latchkey.engine.ConditionalStoreLockManager;
import dev.latchkey.spi.LockContext;
import dev.latchkey.spi.LockProvider;
import dev.latchkey.spi.LockUri;
import java.time.Duration;
import java.util.EnumSet;
import java.util.Set;

/**
 * {@code gs://BUCKET[/PREFIX][?project=ID][&endpoint=URL][&timeout=5s][&poll=100ms][&probe=false]}: locks as
 * objects {@code PREFIX/<encoded key>.lock} in a Google Cloud Storage bucket, changed only by
 * generation-conditioned writes ({@link GcsConditionalStore}) under the shared
 * {@link ConditionalStoreLockManager}. Mutual exclusion holds as long as GCS honours {@code ifGenerationMatch};
 * staleness is judged by the server's clock. GCS takes one write per second to an object, so leases
 * need a TTL of at least 3 s (heartbeat TTL/3); shorter ones are refused.
 *
 * <ul>
 *   <li>{@code endpoint}: an emulator or test server ({@code http://127.0.0.1:4443}); no credentials
 *       are sent to it. Without it: Google's service with Application Default Credentials.</li>
 *   <li>{@code project}: project id (optional; object calls do not need it).</li>
 *   <li>{@code timeout}: per-request connect/read timeout (default 5 s); one client retry at most, so
 *       a call gives up after about twice this. A heartbeat blocked that long must still leave the
 *       lease time to notice its loss before the TTL: keep {@code timeout} under TTL/10 (the
 *       default suits the default 60 s TTL).</li>
 *   <li>{@code poll}: longest pause between looks at a held lock while waiting (default 100 ms).</li>
 *   <li>{@code probe}: {@code true} (default) checks once, when the manager opens, that the store
 *       refuses a second {@code ifGenerationMatch=0} create and a replace with a stale generation
 *       ({@link GcsConditionalStore#probe}: two requests, three under a new prefix), and refuses to
 *       open otherwise; {@code false} skips them, for a store {@code latchkey check} has vouched for.</li>
 * </ul>
 * The bucket must exist: creating it needs rights a lock client should not have. An application
 * that has configured its own {@code Storage} opens a manager on it with {@link GcsLocks}.
 */
public final class GcsLockProvider implements LockProvider {
    private static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(5);
    private static final Duration DEFAULT_POLL = Duration.ofMillis(100);

    @Override
    public Set<String> schemes() {
        return Set.of("gs");
    }

    @Override
    public String description() {
        return "Google Cloud Storage objects with generation preconditions (ifGenerationMatch)";
    }

    @Override
    public LockManager open(LockUri uri, LockContext context) {
        return open(uri, null, context);
    }

    /** The one way a manager is made: from a URI, or on the options of the application's {@code Storage} ({@link GcsLocks}). */
    static LockManager open(LockUri uri, HttpStorageOptions application, LockContext context) {
        GcsConditionalStore store = store(uri, application);
        if (uri.booleanParam("probe", true)) {
            try {
                store.probe();
            } catch (RuntimeException e) {
                store.close();
                throw e;
            }
        }
        return new ConditionalStoreLockManager(store, context, EnumSet.of(Capability.SERVER_SIDE_EXPIRY),
                uri.durationParam("poll", DEFAULT_POLL));
    }

    /** The store a {@code gs://} URI names (validated first; nothing is sent yet). */
    static GcsConditionalStore store(LockUri uri) {
        return store(uri, null);
    }

    /**
     * @param application the options of the application's client (then {@code uri} names bucket,
     *                    prefix, timeout and poll only), or null: the URI's endpoint and project
     *                    with Application Default Credentials
     */
    private static GcsConditionalStore store(LockUri uri, HttpStorageOptions application) {
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
        String endpoint = uri.param("endpoint").map(GcsLockProvider::trimTrailingSlash).orElse(null);
        if (endpoint != null && !endpoint.matches("(?i)https?://[^/?#@]+")) {
            throw new UnsupportedLockUriException("endpoint must be http(s)://host[:port], got '" + endpoint + "' in " + uri);
        }
        Duration timeout = uri.durationParam("timeout", DEFAULT_TIMEOUT);
        Duration poll = uri.durationParam("poll", DEFAULT_POLL);
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
