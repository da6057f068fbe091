package dev.latchkey.s3;

import dev.latchkey.LockBackendException;
import dev.latchkey.spi.RacingWrites;
import dev.latchkey.spi.StoreProbe;
import dev.latchkey.spi.StoredRecord;
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
 * every lock rests on, and honours them atomically. On every open, on one fresh object under
 * {@code <prefix>/.latchkey-probe/} (never listed as a lock) it creates, creates again with
 * {@code If-None-Match: *}, replaces with the current ETag, replaces with the stale one, and deletes.
 * Then it reads the marker {@value #MARKER} there; unless that records a race passed less than
 * {@link #VALIDITY} ago by the store's clock, it races: {@value #RACERS} creates of a second fresh
 * object at once, then {@value #RACES} times {@value #RACERS} replaces of its current version at
 * once, deletes that object, and writes the marker.
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
 * <p><b>The marker</b> caches a verification; it is not a security boundary: anyone who can write
 * the prefix can write lock records too. It is written only after a race passed (a refused store
 * never gets one), with {@code If-None-Match: *}, or {@code If-Match} over an expired one; its time is
 * its {@code Last-Modified}, and its age the {@code Date} of the read minus that, both the store's.
 * A marker that cannot be written costs only the next open's race.
 *
 * <p><b>Cost.</b> An open that finds a fresh marker: 8 requests (the seven sequential ones — two
 * creates and the GET that follows the refused one, two replaces, a tombstone PUT and the DELETE —
 * and the marker's GET). An open that races: 135 (Ceph RGW: 136 for the unquoted If-Match, and a
 * GET after each racing loser's 500): those 8, 124 racing writes in 31 races of 4, the race object's
 * tombstone and DELETE, and the marker's PUT. Measured on S3Proxy over Azurite on a 2-core machine,
 * see {@code docs/backends/s3.md}. {@code probe=false} skips it all, for stores already vetted by
 * {@code latchkey check}.
 */
final class S3StoreProbe {
    private static final System.Logger LOG = System.getLogger(S3StoreProbe.class.getName());

    /** What one probe did and cost; {@code raced}: whether it raced (no fresh marker was found). */
    record Result(int requests, Duration took, boolean raced) {}

    /** The marker's leaf name: its version is this probe's, so a stronger probe's marker has another name and races again. */
    static final String MARKER = "race-passed-v1";
    /** How every marker's content begins (the rest says what passed, and a random id, so that each marker's ETag is new). */
    private static final String MARKER_CONTENT = "latchkey probe race passed v1: ";
    /**
     * How long a passed race is trusted: a store is replaced or reconfigured seldom, and a week bounds
     * how long a change to a non-atomic one goes unseen while keeping the race off nearly every open.
     */
    static final Duration VALIDITY = Duration.ofDays(7);

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
        return run(store, RACES, VALIDITY);
    }

    /**
     * {@link #run(S3ConditionalStore)} with {@code races} races of replaces and a marker trusted for
     * {@code validity} (the tests' ones: to make a miss negligible, to expire a marker).
     */
    static Result run(S3ConditionalStore store, int races, Duration validity) {
        long start = System.nanoTime();
        long before = store.requests();
        List<String> ignored = quickChecks(store);
        String marker = store.probeKey(MARKER);
        Optional<StoredRecord> passed = ignored.isEmpty() ? store.readAt(marker, true) : Optional.empty();
        boolean raced = ignored.isEmpty() && !isFresh(passed, validity);
        if (raced) {
            Optional<String> lost = race(store, races);
            if (lost.isPresent()) ignored.add(lost.get());
            else markPassed(store, marker, passed, races);
        }
        if (!ignored.isEmpty()) {
            throw new StoreProbe.Untrusted("the S3 store " + store.where() + " ignores " + String.join(" and ", ignored)
                    + ": it cannot hold locks (two holders could both get one). Use a store whose conditional writes are"
                    + " checked atomically (latchkey check races them); probe=false skips this check");
        }
        Result r = new Result((int) (store.requests() - before), Duration.ofNanos(System.nanoTime() - start), raced);
        LOG.log(System.Logger.Level.DEBUG, () -> "probe of " + store.where() + ": " + r.requests() + " requests, "
                + r.took().toMillis() + " ms" + (raced ? ", raced" : ", race skipped (a fresh marker)"));
        return r;
    }

    /** The sequential steps on one fresh object; returns what the store let through that it must not. */
    private static List<String> quickChecks(S3ConditionalStore store) {
        String key = store.probeKey(UUID.randomUUID().toString());
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
        return ignored;
    }

    /** Whether {@code marker} records a pass younger than {@code validity}; without the store's Date it is not. */
    private static boolean isFresh(Optional<StoredRecord> marker, Duration validity) {
        return marker.filter(m -> new String(m.data(), StandardCharsets.UTF_8).startsWith(MARKER_CONTENT))
                .map(StoredRecord::age)
                .filter(age -> age.compareTo(validity) < 0)
                .isPresent();
    }

    /**
     * Writes the marker of a passed race, conditionally over the one read before (if any). Best
     * effort: a probe racing this one may have written it first, and a marker not written costs only
     * the next open's race.
     */
    private static void markPassed(S3ConditionalStore store, String marker, Optional<StoredRecord> old, int races) {
        byte[] content = (MARKER_CONTENT + RACERS + " racing creates, then " + races + " races of " + RACERS
                + " replaces, each with one winner; probe " + UUID.randomUUID()).getBytes(StandardCharsets.UTF_8);
        try {
            if (old.isPresent()) store.replaceAt(marker, old.get().version(), content);
            else store.createIfAbsent(marker, content, null);
        } catch (LockBackendException e) {
            LOG.log(System.Logger.Level.WARNING, "could not write the probe's marker " + marker + " in " + store.where()
                    + " (the next open races again): " + e.getMessage());
        }
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
