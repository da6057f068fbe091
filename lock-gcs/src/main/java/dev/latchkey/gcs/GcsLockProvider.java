package dev.latchkey.gcs;

import com.google.cloud.storage.HttpStorageOptions;
import dev.latchkey.Capability;
import dev.latchkey.LockManager;
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
 * that has configured its own {@code Storage} opens a manager on it with {@link GcsLocks}. The URI
 * is read, and the store built, by {@link GcsStoreFactory}.
 */
public final class GcsLockProvider implements LockProvider {
    static final Duration DEFAULT_POLL = Duration.ofMillis(100);

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
        GcsConditionalStore store = GcsStoreFactory.store(uri, application);
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
}
