package dev.latchkey.s3;

import dev.latchkey.Capability;
import dev.latchkey.LockManager;
import dev.latchkey.engine.ConditionalStoreLockManager;
import dev.latchkey.s3.S3ConditionalStore.Staleness;
import dev.latchkey.spi.LockContext;
import dev.latchkey.spi.LockProvider;
import dev.latchkey.spi.LockUri;
import java.util.EnumSet;
import java.util.Set;

/**
 * {@code s3://bucket[/prefix]?region=…&endpoint=…&pathStyle=true&accessKeyId=…&secretAccessKey=…&staleness=…&probe=…}:
 * locks as objects {@code <prefix>/<encoded key>.lock}, changed only by conditional writes, run by
 * the shared {@link ConditionalStoreLockManager}. Safe on any store whose {@code If-None-Match: *} and
 * {@code If-Match} writes are atomic (AWS S3 is; check others with {@code latchkey check}). A lock
 * is identified by bucket, prefix (leading and trailing slashes aside) and key: every other
 * parameter may differ between clients of one lock.
 *
 * <p><b>Staleness</b> ({@link Staleness}): {@code staleness=server} judges a record's age by the
 * server's {@code Date} − {@code Last-Modified}, which is safe only when both come from clocks kept
 * well within TTL/5 of each other; {@code staleness=observed} watches a version unchanged for a TTL
 * on the local monotonic clock and reads no wall clock. The default is {@code server} for AWS S3
 * itself (no {@code endpoint}: its fleet's clocks are tightly synchronised) and {@code observed}
 * for any {@code endpoint} (MinIO or Ceph nodes behind a load balancer may answer {@code Date} and
 * {@code Last-Modified} from different, unsynchronised clocks). Only {@code server} declares
 * {@link Capability#SERVER_SIDE_EXPIRY}.
 *
 * <p>Credentials come from {@code accessKeyId}/{@code secretAccessKey} (+ {@code sessionToken}),
 * else from the SDK's default chain (environment, profile, instance role). The region comes from
 * {@code region}, else the SDK's default chain, else {@code us-east-1} when an {@code endpoint} is
 * given. Each call makes at most {@code maxAttempts} attempts (default 2) of at most
 * {@code timeout} each (default 3 s), and ends within {@code maxAttempts × timeout + 1 s}
 * ({@link S3Clients}), so an unreachable store surfaces in seconds, well inside a lease's margin.
 *
 * <p><b>Probe.</b> When a manager opens, the store is checked once ({@link S3StoreProbe}: 8
 * requests under {@code <prefix>/.latchkey-probe/}, and 135, most of them racing writes, when no
 * marker there records a race passed in the last 7 days; if the store cannot be reached then,
 * before the manager's first request): a store that ignores
 * {@code If-None-Match: *} or a stale {@code If-Match} (s3rver), or lets more than one racing write
 * win (S3Proxy's {@code transient} store, by chance), is refused with a
 * {@link dev.latchkey.LockBackendException} naming it. {@code probe=false} skips the check, for a
 * store vetted by {@code latchkey check}.
 *
 * <p>An application that has configured its own {@code S3Client} opens a manager on it with {@link S3Locks}.
 *
 * <p>This class names no AWS SDK type (the URI is read by {@link S3StoreFactory}): instantiating it, as
 * {@link java.util.ServiceLoader} does for every provider, links nothing of the SDK.
 */
public final class S3LockProvider implements LockProvider {
    @Override
    public Set<String> schemes() {
        return Set.of("s3");
    }

    @Override
    public String description() {
        return "S3 and S3-compatible object stores (conditional writes: If-None-Match / If-Match)";
    }

    @Override
    public LockManager open(LockUri uri, LockContext context) {
        return open(S3StoreFactory.storeOn(uri, null, true), context);
    }

    /** The one way a manager is made, on a URI's store or on one over the application's client ({@link S3Locks}). */
    static LockManager open(S3ConditionalStore store, LockContext context) {
        try {
            store.probeOnOpen();
        } catch (RuntimeException e) {
            store.close();
            throw e;
        }
        return new ConditionalStoreLockManager(store, context, store.staleness() == Staleness.SERVER
                ? EnumSet.of(Capability.SERVER_SIDE_EXPIRY) : EnumSet.noneOf(Capability.class));
    }

    /** The store alone (not probed: the caller races it), for the TCK's CAS contract and {@code latchkey check}. */
    public S3ConditionalStore openStore(LockUri uri) {
        return S3StoreFactory.storeOn(uri, null, false);
    }
}
