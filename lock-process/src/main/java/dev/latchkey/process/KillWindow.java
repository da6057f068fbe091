package dev.latchkey.process;

import dev.latchkey.Durations;
import dev.latchkey.spi.ManagedLease;
import java.time.Duration;

/**
 * The time a {@link LockedProcess} has to stop its job once its lease has expired, and how it is
 * split, so that every process of the job is dead before the store can let the next holder in.
 *
 * <p>An expired lease signals its loss the lease's safety margin (TTL/5,
 * {@link ManagedLease#safetyMargin(Duration)}) before the store's own expiry. That margin is the
 * window: first the grace between SIGTERM and SIGKILL, then a reserve of half the margin, and at
 * least {@link #MIN_KILL_RESERVE}, for the loss timer firing late on a loaded machine, the SIGKILL
 * and the kernel tearing the processes down. So the grace may be at most
 * {@code margin − max(1s, margin/2)}; the default is that, capped at {@link #DEFAULT_GRACE}; a
 * longer grace, and a TTL under {@link #MIN_TTL} (whose margin cannot hold the reserve),
 * are refused as usage errors.
 */
final class KillWindow {
    static final Duration DEFAULT_GRACE = Duration.ofSeconds(10);
    static final Duration MIN_KILL_RESERVE = Duration.ofSeconds(1);
    /** The shortest TTL whose margin holds the reserve: 5 × 1 s. */
    static final Duration MIN_TTL = MIN_KILL_RESERVE.multipliedBy(5);

    private KillWindow() {}

    /**
     * The grace between SIGTERM and SIGKILL for a job stopped when its lease of {@code ttl} is lost.
     *
     * @param requested the grace asked for, or null for the default
     * @throws IllegalArgumentException (a usage error) saying the limit and why, when the TTL is too
     *         short or the requested grace does not fit
     */
    static Duration grace(Duration ttl, Duration requested) {
        Duration margin = ManagedLease.safetyMargin(ttl);
        if (ttl.compareTo(MIN_TTL) < 0) {
            throw new IllegalArgumentException("a TTL of " + Durations.format(ttl) + " is too short to stop the job"
                    + " when the lease is lost: once the lease is lost, the job's processes must be dead before the store can let the next"
                    + " holder in, which it may do as soon as the lease's safety margin (TTL/5 = "
                    + Durations.format(margin) + ") has passed, and killing it needs at least "
                    + Durations.format(MIN_KILL_RESERVE) + " of that on a loaded machine; use a TTL of "
                    + Durations.format(MIN_TTL) + " or more");
        }
        Duration max = maxGrace(ttl);
        if (requested == null) return max.compareTo(DEFAULT_GRACE) < 0 ? max : DEFAULT_GRACE;
        if (requested.compareTo(max) > 0) {
            throw new IllegalArgumentException("a grace of " + Durations.format(requested) + " does not fit a TTL of "
                    + Durations.format(ttl) + ": once the lease is lost, the job's processes must be dead before the"
                    + " store can let the next holder in, which it may do as soon as the lease's safety margin"
                    + " (TTL/5 = " + Durations.format(margin) + ") has passed, and half of that (at least "
                    + Durations.format(MIN_KILL_RESERVE) + ") is kept for SIGKILL; use a grace of "
                    + Durations.format(max) + " or less, or a TTL of " + Durations.format(minTtl(requested)) + " or more");
        }
        return requested;
    }

    /** margin − max(reserve, margin/2), whole milliseconds; zero at {@link #MIN_TTL}. */
    static Duration maxGrace(Duration ttl) {
        Duration margin = ManagedLease.safetyMargin(ttl);
        Duration half = margin.dividedBy(2);
        Duration reserve = half.compareTo(MIN_KILL_RESERVE) > 0 ? half : MIN_KILL_RESERVE;
        return Duration.ofMillis(margin.minus(reserve).toMillis());
    }

    /** The shortest TTL that {@code grace} fits: max(10 × grace, 5 × (grace + reserve)), whole seconds up. */
    static Duration minTtl(Duration grace) {
        Duration byHalf = grace.multipliedBy(10);
        Duration byReserve = grace.plus(MIN_KILL_RESERVE).multipliedBy(5);
        Duration min = byHalf.compareTo(byReserve) > 0 ? byHalf : byReserve;
        long seconds = (min.toMillis() + 999) / 1000;
        return Duration.ofSeconds(seconds);
    }
}
