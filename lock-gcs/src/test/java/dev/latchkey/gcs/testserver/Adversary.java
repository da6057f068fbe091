package dev.latchkey.gcs.testserver;

import java.time.Duration;
import java.time.Instant;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The {@link Adversity} of one running {@link GcsTestServer}: its seeded choices, its two clocks and
 * the faults it has made so far. Thread-safe.
 */
final class Adversary {
    /** A request failing on its own: answered {@code code}, after applying it if {@code afterApply}. */
    record Fault(int code, String reason, boolean afterApply) {}

    private static final List<Fault> KINDS = List.of(new Fault(500, "backendError", false),
            new Fault(502, "badGateway", false), new Fault(503, "backendError", false),
            new Fault(504, "gatewayTimeout", false), new Fault(408, "requestTimeout", false));
    /** Periods of the two clocks' swings: unequal, so their difference drifts rather than repeats quickly. */
    private static final Duration FRONT_END_PERIOD = Duration.ofSeconds(7);
    private static final Duration STORAGE_PERIOD = Duration.ofSeconds(11);

    private final Adversity adversity;
    private final Random random; // guarded by this
    private final Set<Long> issued = new HashSet<>(); // guarded by this
    private final long startNanos = System.nanoTime();
    private final double frontEndPhase;
    private final double storagePhase;
    private final AtomicInteger faultsBefore = new AtomicInteger();
    private final AtomicInteger faultsAfterWrite = new AtomicInteger();
    private final AtomicInteger burstsAdmitted = new AtomicInteger();
    /** The step of the whole server's clock, front end and storage alike ({@link #stepClock}). */
    private volatile Duration clockStep = Duration.ZERO;

    Adversary(Adversity adversity) {
        this.adversity = adversity;
        this.random = new Random(adversity.seed);
        this.frontEndPhase = random.nextDouble() * 2 * Math.PI;
        this.storagePhase = random.nextDouble() * 2 * Math.PI;
    }

    Adversity adversity() {
        return adversity;
    }

    /** The next generation: {@code increasing} (the honest one), or a random one never issued before. */
    synchronized long generation(long increasing) {
        if (!adversity.randomGenerations) return increasing;
        long g;
        do {
            g = random.nextLong() & Long.MAX_VALUE;
        } while (g == 0 || !issued.add(g)); // 0 means "no live object" in ifGenerationMatch
        return g;
    }

    /**
     * The storage's clock: objects' {@code updated} and {@code timeCreated}. The front end's clock,
     * the {@code Date} header, is the true time: the JDK's server stamps every response's
     * {@code Date} itself, over any set by the handler. So the two clocks' disagreement, all a
     * client can see, is put on this one: each clock swings ± half the drift around the true time,
     * and this one is off by their difference (or by the constant lead, negated).
     */
    Instant storageNow() {
        Instant now = Instant.now().plus(clockStep);
        if (adversity.frontEndLead != null) return now.minus(adversity.frontEndLead);
        if (adversity.clockDrift.isZero()) return now;
        return now.plusNanos(swing(STORAGE_PERIOD, storagePhase) - swing(FRONT_END_PERIOD, frontEndPhase));
    }

    /**
     * Steps the server's clock, front end and storage alike, to the true time plus {@code offset}.
     * The JDK's server stamps {@code Date} with the true time whatever we do, so the step is served
     * as all a client can see of it, {@code Date − updated} within one response: the storage stamps
     * with the stepped clock ({@link #storageNow}), and every object time is shown
     * {@link #clockStep()} earlier than stamped. A record written before a step forward of X then
     * looks X older, one written after it as old as it is, exactly as under a real step. (Only
     * absolute times, and one object's {@code updated} seen before and after a step, differ from
     * a real step; the {@code gs://} backend reads neither.)
     */
    void stepClock(Duration offset) {
        clockStep = offset;
    }

    /** How far the server's clock is stepped now: object times are shown this much earlier than stamped. */
    Duration clockStep() {
        return clockStep;
    }

    private long swing(Duration period, double phase) {
        double t = (System.nanoTime() - startNanos) / (double) period.toNanos();
        return Math.round(adversity.clockDrift.toNanos() / 2.0 * Math.sin(2 * Math.PI * t + phase));
    }

    /** Whether a write within the write interval is admitted anyway (a burst GCS tolerated). */
    synchronized boolean admitBurst() {
        boolean admitted = adversity.burstAdmitted > 0 && random.nextDouble() < adversity.burstAdmitted;
        if (admitted) burstsAdmitted.incrementAndGet();
        return admitted;
    }

    /** A fault for the next request, or null; {@code write}: one that changes an object. */
    synchronized Fault fault(boolean write) {
        if (adversity.chaosRate == 0 || random.nextDouble() >= adversity.chaosRate) return null;
        Fault kind = KINDS.get(random.nextInt(KINDS.size()));
        return new Fault(kind.code(), kind.reason(), write && random.nextBoolean());
    }

    /** Counts a fault as sent: {@code applied} if the write it answered had been applied. */
    void sent(Fault f, boolean applied) {
        (applied ? faultsAfterWrite : faultsBefore).incrementAndGet();
    }

    boolean checksPreconditions() {
        return !adversity.ignorePreconditions;
    }

    /**
     * Checks a request's {@code Authorization} header when tokens are required: 401 without one or
     * with an unknown token, 403 for a write with a read-only token. Messages never hold the token.
     */
    void authorize(String authorization, boolean write, String permission) throws GcsError {
        if (adversity.tokens.isEmpty()) return;
        if (authorization == null || !authorization.startsWith("Bearer ")) {
            throw new GcsError(401, "required", "Anonymous caller does not have " + permission
                    + " access to the Google Cloud Storage object.");
        }
        Boolean mayWrite = adversity.tokens.get(authorization.substring("Bearer ".length()).trim());
        if (mayWrite == null) throw new GcsError(401, "authError", "Invalid Credentials");
        if (write && !mayWrite) {
            throw new GcsError(403, "forbidden", "The caller does not have " + permission
                    + " access to the Google Cloud Storage object. Permission '" + permission + "' denied.");
        }
    }

    /** Faults sent before anything was applied (reads, refused or not yet applied writes). */
    int faultsBefore() {
        return faultsBefore.get();
    }

    /** Faults sent instead of the answer to a write that was applied. */
    int faultsAfterWrite() {
        return faultsAfterWrite.get();
    }

    int burstsAdmitted() {
        return burstsAdmitted.get();
    }
}
