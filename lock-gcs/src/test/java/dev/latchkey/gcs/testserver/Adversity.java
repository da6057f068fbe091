package dev.latchkey.gcs.testserver;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;

/**
 * What a {@link GcsTestServer} does where GCS's documentation allows more than a client may
 * assume: the less convenient thing, on purpose. Immutable; {@link #none()} is the honest server
 * (increasing generations, one clock, a strict write limit, no faults, no authentication).
 *
 * <ul>
 *   <li>{@link #seeded}: generations unique but random, not increasing (GCS promises only that a
 *       generation identifies one version); the {@code Date} header (a front end's clock) and each
 *       object's {@code updated} (the storage's clock) from two clocks drifting apart up to
 *       {@link #DEFAULT_CLOCK_DRIFT}; and a write within the one-second interval admitted about
 *       {@link #DEFAULT_BURST_ADMITTED} of the time instead of always refused (GCS: "may" throttle).
 *       {@link #frontEndAhead} holds the clocks' worst case instead: the front end a fixed lead ahead.</li>
 *   <li>{@link #chaos}: a request fails on its own with 500, 502, 503, 504 or 408 — half of them
 *       before anything is done, half <em>after</em> a write was applied.</li>
 *   <li>{@link #token}: requests must carry {@code Authorization: Bearer <token>}: none gets 401, an
 *       unknown token 401, a read-only token 403 on writes. Tokens are never echoed.</li>
 *   <li>{@link #ignoringPreconditions}: writes ignore {@code ifGenerationMatch} and the like, as a
 *       broken emulator does — for proving that a client notices.</li>
 * </ul>
 * Every random choice comes from one generator seeded with {@link #seed()}, which the server
 * prints when it starts. Requests race, so a seed reproduces the choices' sequence, not which
 * request gets each: a failure's seed replays the same faults at the same rates.
 */
public final class Adversity {
    /** How far the front end's and the storage's clocks drift apart, at most, either way. */
    public static final Duration DEFAULT_CLOCK_DRIFT = Duration.ofMillis(400);
    /** The share of writes within the write interval that {@link #seeded} admits. */
    public static final double DEFAULT_BURST_ADMITTED = 0.3;

    final long seed;
    final boolean randomGenerations;
    final Duration clockDrift;
    /** A constant lead of the front end's clock over the storage's, instead of the drift; null: drift. */
    final Duration frontEndLead;
    final double burstAdmitted;
    final double chaosRate;
    /** Accepted bearer tokens, each with whether it may write; empty: no authentication. */
    final Map<String, Boolean> tokens;
    final boolean ignorePreconditions;

    private Adversity(long seed, boolean randomGenerations, Duration clockDrift, Duration frontEndLead, double burstAdmitted,
                      double chaosRate, Map<String, Boolean> tokens, boolean ignorePreconditions) {
        this.seed = seed;
        this.randomGenerations = randomGenerations;
        this.clockDrift = clockDrift;
        this.frontEndLead = frontEndLead;
        this.burstAdmitted = burstAdmitted;
        this.chaosRate = chaosRate;
        this.tokens = Map.copyOf(tokens);
        this.ignorePreconditions = ignorePreconditions;
    }

    /** The honest server: nothing adversarial. */
    public static Adversity none() {
        return new Adversity(0, false, Duration.ZERO, null, 0, 0, Map.of(), false);
    }

    /** Random generations, drifting clocks, bursts sometimes admitted; choices from {@code seed}. */
    public static Adversity seeded(long seed) {
        return new Adversity(seed, true, DEFAULT_CLOCK_DRIFT, null, DEFAULT_BURST_ADMITTED, 0, Map.of(), false);
    }

    /**
     * {@link #seeded} with the seed of system property {@code property} if set, else a random one
     * — printed by the server, so a failure can be rerun with {@code -Dproperty=seed}.
     */
    public static Adversity seededFrom(String property) {
        Long fixed = Long.getLong(property);
        return seeded(fixed != null ? fixed : ThreadLocalRandom.current().nextLong());
    }

    /** This, plus requests failing on their own at {@code rate} (0..1), before or after being applied. */
    public Adversity chaos(double rate) {
        if (rate < 0 || rate > 1) throw new IllegalArgumentException("chaos rate must be within 0..1, got " + rate);
        return new Adversity(seed, randomGenerations, clockDrift, frontEndLead, burstAdmitted, rate, tokens, ignorePreconditions);
    }

    /** This, plus authentication: {@code token} is accepted, for writes too if {@code mayWrite}. */
    public Adversity token(String token, boolean mayWrite) {
        Map<String, Boolean> more = new LinkedHashMap<>(tokens);
        more.put(token, mayWrite);
        return new Adversity(seed, randomGenerations, clockDrift, frontEndLead, burstAdmitted, chaosRate, more, ignorePreconditions);
    }

    /** This, but writes ignore every precondition (a broken store). */
    public Adversity ignoringPreconditions() {
        return new Adversity(seed, randomGenerations, clockDrift, frontEndLead, burstAdmitted, chaosRate, tokens, true);
    }

    /** This, but the front end's clock a constant {@code lead} ahead of the storage's instead of drifting: the worst case, held. */
    public Adversity frontEndAhead(Duration lead) {
        return new Adversity(seed, randomGenerations, Duration.ZERO, lead, burstAdmitted, chaosRate, tokens, ignorePreconditions);
    }

    public long seed() {
        return seed;
    }

    /** Whether nothing here is adversarial ({@link #none()}). */
    boolean honest() {
        return !randomGenerations && frontEndLead == null && chaosRate == 0 && tokens.isEmpty() && !ignorePreconditions;
    }

    @Override
    public String toString() {
        if (honest()) return "honest";
        return "seed " + seed + (randomGenerations ? ", random generations" : "")
                + (clockDrift.isZero() ? "" : ", Date and updated drifting up to " + clockDrift.toMillis() + " ms apart")
                + (frontEndLead == null ? "" : ", Date " + frontEndLead.toMillis() + " ms ahead of updated")
                + (burstAdmitted > 0 ? ", " + Math.round(burstAdmitted * 100) + "% of bursts admitted" : "")
                + (chaosRate > 0 ? ", chaos " + chaosRate * 100 + "% of requests" : "")
                + (tokens.isEmpty() ? "" : ", bearer tokens required")
                + (ignorePreconditions ? ", PRECONDITIONS IGNORED" : "");
    }
}
