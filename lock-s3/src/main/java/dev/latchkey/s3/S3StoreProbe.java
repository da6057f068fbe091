package dev.latchkey.s3;

import dev.latchkey.LockBackendException;
import dev.latchkey.spi.RacingWrites;
import dev.latchkey.spi.StoreProbe;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The check an {@code s3://} manager makes of its store once, when it opens (or, if the store
 * cannot be reached then, before its first request): that the store honours the two preconditions
 * every lock rests on, and honours them atomically. On one fresh object under
 * {@code <prefix>/.latchkey-probe/} (never listed as a lock) it creates, creates again with
 * {@code If-None-Match: *}, replaces with the current ETag, replaces with the stale one, and deletes.
 * Then it races: {@value #RACERS} creates of a second fresh object at once, then {@value #RACES}
 * times {@value #RACERS} replaces of its current version at once, and deletes it.
 *
 * <p><b>Guarantee.</b> A store that let the second create or the stale replace land, or more than
 * one write of a race, is refused with a non-retriable {@link StoreProbe.Untrusted} naming the store
 * (bucket and endpoint) and what it let through: such a store gives no exclusion (s3rver answers 200
 * to both; S3Proxy's {@code transient} store checks {@code If-Match} and then writes, so racing
 * replaces can all win), and nothing else in the backend would notice. A probe that cannot finish
 * (the store unreachable, a create of a fresh object or a replace with the current ETag refused in
 * every form, a race that nobody won) throws a retriable one and runs again before the next request:
 * no request of a lock is sent before a probe has passed. A loser's 409 or 500 counts as lost. The
 * races catch a store that checks and then writes only by chance: S3Proxy's {@code transient} store
 * in 50 of 50 opens measured, about 995 in 1000 by its rate ({@link #RACES}); {@code latchkey check}
 * races 200 rounds.
 * The replace also teaches the store which form of {@code If-Match} its server honours
 * ({@link S3ConditionalStore}), before the races use it.
 *
 * <p><b>Cost.</b> 133 requests, 134 where the ETag must go unquoted (Ceph RGW; there also a GET after
 * each loser's 500): seven for the sequential steps (two creates and the GET that follows the refused
 * one, two replaces, a tombstone PUT and the DELETE), 124 racing writes in 31 races of 4, and the race
 * object's tombstone and DELETE: 0.5 to 6.9 s on S3Proxy over Azurite on a 2-core machine, by its load. {@code probe=false} skips it, for stores already vetted by
 * {@code latchkey check}.
 */
final class S3StoreProbe {
    private static final System.Logger LOG = System.getLogger(S3StoreProbe.class.getName());

    /** What one probe did and cost. */
    record Result(int requests, Duration took) {}

    /** Writes in each race: of 2, 4 and 8, 4 caught S3Proxy's {@code transient} store most often per request. */
    static final int RACERS = 4;
    /**
     * Races of replaces, after the race of creates: S3Proxy's {@code transient} store let two or more
     * of 4 held replaces win in 16% of races (97 of 592, 100 fresh JVMs), so 30 races miss it about
     * once in 200 opens.
     */
    static final int RACES = 30;
    /** A race still running after this is the store's slowness, not a verdict. */
    private static final Duration BOUND = Duration.ofSeconds(30);

    private S3StoreProbe() {}

    /** @throws LockBackendException if the store ignored or refused a precondition (or could not be reached) */
    static Result run(S3ConditionalStore store) {
        return run(store, RACES);
    }

    /** {@link #run(S3ConditionalStore)} with {@code races} races of replaces (the tests' one to make a miss negligible). */
    static Result run(S3ConditionalStore store, int races) {
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
        if (ignored.isEmpty()) race(store, races).ifPresent(ignored::add);
        if (!ignored.isEmpty()) {
            throw new StoreProbe.Untrusted("the S3 store " + store.where() + " ignores " + String.join(" and ", ignored)
                    + ": it cannot hold locks (two holders could both get one). Use a store whose conditional writes are"
                    + " checked atomically (latchkey check races them); probe=false skips this check");
        }
        Result r = new Result((int) (store.requests() - before), Duration.ofNanos(System.nanoTime() - start));
        LOG.log(System.Logger.Level.DEBUG, () -> "probe of " + store.where() + ": " + r.requests() + " requests, "
                + r.took().toMillis() + " ms");
        return r;
    }

    /**
     * The racing step: {@link #RACERS} creates of one fresh object at once, then {@code races} times
     * {@link #RACERS} replaces of its current version at once ({@link RacingWrites}; every body is held
     * until each racer has sent its request's head). Returns what a non-atomic store let through, if
     * it did; a race with no winner at all is the store refusing (409, throttling), not a verdict.
     */
    private static Optional<String> race(S3ConditionalStore store, int races) {
        String key = store.probeKey(UUID.randomUUID().toString());
        AtomicReference<String> current = new AtomicReference<>();
        boolean known = false; // whether current is the object's version, for the clean-up
        try {
            RacingWrites.Outcome created = RacingWrites.race(RACERS, (i, together) ->
                    won(store.createIfAbsent(key, bytes("racing create " + i), together), current), BOUND);
            if (created.won() > 1) {
                return Optional.of("If-None-Match: * when writes race (" + created.won() + " of " + RACERS
                        + " racing creates of one object won)");
            }
            if (created.won() == 0) throw busy(store, "none of " + RACERS + " racing creates of a fresh object " + key + " won", created);
            for (int race = 1; race <= races; race++) {
                String expected = current.get();
                String what = "racing replace " + race + ".";
                RacingWrites.Outcome replaced = RacingWrites.race(RACERS, (i, together) ->
                        won(store.replaceAt(key, expected, bytes(what + i), together), current), BOUND);
                if (replaced.won() > 1) {
                    return Optional.of("If-Match when writes race (" + replaced.won() + " of " + RACERS
                            + " racing replaces of one version won, in race " + race + " of " + races + ")");
                }
                if (replaced.won() == 0) throw busy(store, "none of " + RACERS + " racing replaces of " + key + " won", replaced);
            }
            known = true;
            return Optional.empty();
        } finally {
            cleanUp(store, key, known ? Optional.ofNullable(current.get()) : Optional.empty());
        }
    }

    /** Whether a racing write landed; if it did, its version is the object's (when it alone won). */
    private static boolean won(Optional<String> version, AtomicReference<String> current) {
        version.ifPresent(current::set);
        return version.isPresent();
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

    private static LockBackendException busy(S3ConditionalStore store, String what, RacingWrites.Outcome outcome) {
        LockBackendException e = busy(store, what);
        outcome.failed().forEach(e::addSuppressed);
        return e;
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
