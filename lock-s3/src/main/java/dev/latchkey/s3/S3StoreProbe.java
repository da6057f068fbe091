package dev.latchkey.s3;

import dev.latchkey.LockBackendException;
import dev.latchkey.spi.StoreProbe;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;

/**
 * The check an {@code s3://} manager makes of its store once, when it opens (or, if the store
 * cannot be reached then, before its first request): that the store honours the two preconditions
 * every lock rests on. On one fresh object under {@code <prefix>/.latchkey-probe/} (never listed as
 * a lock) it creates, creates again with {@code If-None-Match: *}, replaces with the current ETag,
 * replaces with the stale one, and deletes.
 *
 * <p><b>Guarantee.</b> A store that let the second create or the stale replace land is refused with
 * a non-retriable {@link StoreProbe.Untrusted} naming the store (bucket and
 * endpoint) and what it ignored: such a store gives no exclusion (s3rver answers 200 to both), and
 * nothing else in the backend would notice. A probe that cannot finish (the store unreachable, a
 * create of a fresh object or a replace with the current ETag refused in every form) throws a
 * retriable one and runs again before the next request: no request of a lock is sent before a probe
 * has passed. Passing proves the preconditions are <em>checked</em>, not that they are atomic under
 * a race: that is what {@code latchkey check} races for. The replace also teaches the store which
 * form of {@code If-Match} its server honours ({@link S3ConditionalStore}).
 *
 * <p><b>Cost.</b> Seven requests, eight where the ETag must go unquoted (Ceph RGW): two creates and
 * the GET that follows the refused one, two replaces, a tombstone PUT and the DELETE, one round trip
 * each. {@code probe=false} skips it, for stores already vetted by {@code latchkey check}.
 */
final class S3StoreProbe {
    private static final System.Logger LOG = System.getLogger(S3StoreProbe.class.getName());

    /** What one probe did and cost. */
    record Result(int requests, Duration took) {}

    private S3StoreProbe() {}

    /** @throws LockBackendException if the store ignored or refused a precondition (or could not be reached) */
    static Result run(S3ConditionalStore store) {
        long start = System.nanoTime();
        String key = store.probeKey(UUID.randomUUID().toString());
        long before = store.requests();
        List<String> ignored = new ArrayList<>();
        String v1 = store.createAt(key, bytes("first")).orElseThrow(() -> busy(store,
                "PutObject If-None-Match: * of a fresh object (" + key + ") was refused"));
        Optional<String> v2 = Optional.empty();
        try {
            if (store.createAt(key, bytes("second create")).isPresent()) {
                ignored.add("If-None-Match: * (a second create of one object succeeded)");
            }
            v2 = store.replaceAt(key, v1, bytes("replace"));
            if (v2.isEmpty() && ignored.isEmpty()) {
                throw busy(store, "PutObject If-Match with the object's current ETag was refused, quoted and unquoted");
            }
            if (store.replaceAt(key, v1, bytes("stale replace")).isPresent()) {
                ignored.add("If-Match (a replace with a stale ETag succeeded)");
            }
        } finally {
            cleanUp(store, key, ignored.isEmpty() ? v2 : Optional.empty());
        }
        if (!ignored.isEmpty()) {
            throw new StoreProbe.Untrusted("the S3 store " + store.where() + " ignores " + String.join(" and ", ignored)
                    + ": it cannot hold locks (two holders could both get one). Use a store whose conditional writes are"
                    + " checked (latchkey check races them); probe=false skips this check");
        }
        Result r = new Result((int) (store.requests() - before), Duration.ofNanos(System.nanoTime() - start));
        LOG.log(System.Logger.Level.DEBUG, () -> "probe of " + store.where() + ": " + r.requests() + " requests, "
                + r.took().toMillis() + " ms");
        return r;
    }

    /**
     * Deletes the probe's object ({@code current}: its version, if known; else it is read). Best
     * effort: a credential without {@code s3:DeleteObject} leaves one small object behind per probe
     * rather than refusing a store that can hold locks.
     */
    private static void cleanUp(S3ConditionalStore store, String key, Optional<String> current) {
        try {
            Optional<String> version = current.isPresent() ? current : store.readAt(key).map(r -> r.version());
            version.ifPresent(v -> store.deleteAt(key, v));
        } catch (LockBackendException e) {
            LOG.log(System.Logger.Level.WARNING, "could not delete the probe's object " + key + " in " + store.where()
                    + " (grant s3:DeleteObject, or set probe=false): " + e.getMessage());
        }
    }

    /** Not a verdict: throttling and conflicts refuse writes too, so the probe runs again on the next call. */
    private static LockBackendException busy(S3ConditionalStore store, String what) {
        return new LockBackendException("the probe of the S3 store " + store.where() + " could not finish: " + what
                + " (throttling, a conflict, or a store that honours neither form of If-Match); probe=false skips this check", true);
    }

    private static byte[] bytes(String what) {
        return ("latchkey probe: " + what + " " + UUID.randomUUID()).getBytes(StandardCharsets.UTF_8);
    }
}
