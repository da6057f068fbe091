package dev.latchkey.gcs.testserver;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.function.BooleanSupplier;

/**
 * GCS's limit on writes to one object name ("an update limit on each object of once per second"),
 * enforced: a mutation (upload, patch, delete) of a name whose last applied mutation is less than
 * the interval ago is refused with {@code 429 rateLimitExceeded} and changes nothing — unless the
 * burst rule admits it (GCS tolerates short bursts, sometimes: by default none is admitted, so a
 * client that stays within the limit here stays within it on GCS; an {@link Adversity} admits some
 * at random, so a client cannot count on a 429 either). Only applied mutations count; refused ones (412, 429) do not restart
 * the interval. Measured on the monotonic clock at the moment each mutation is applied. Interval
 * zero: no limit.
 *
 * <p>Not thread-safe: the server calls it under its state lock, together with the write it guards.
 */
final class MutationRateLimit {
    /** Names written long ago are forgotten once this many are tracked (they can no longer refuse anything). */
    private static final int PRUNE_AT = 10_000;

    private final long intervalNanos;
    private final BooleanSupplier burstAdmitted;
    /** Monotonic time of the last applied mutation, by "bucket/object". */
    private final Map<String, Long> lastMutation = new HashMap<>();

    /** @param burstAdmitted asked for each mutation within the interval: true admits it anyway */
    MutationRateLimit(Duration interval, BooleanSupplier burstAdmitted) {
        if (interval.isNegative()) throw new IllegalArgumentException("object write interval must not be negative: " + interval);
        this.intervalNanos = interval.toNanos();
        this.burstAdmitted = burstAdmitted;
    }

    Duration interval() {
        return Duration.ofNanos(intervalNanos);
    }

    /**
     * Records a mutation of {@code bucket/name} about to be applied now, or throws 429 if the last
     * one was less than the interval ago. Call only once the write is certain to apply otherwise
     * (after its preconditions held), and apply it right after, under the same lock.
     */
    void admit(String bucket, String name) throws GcsError {
        if (intervalNanos == 0) return;
        long now = System.nanoTime();
        String object = bucket + "/" + name;
        Long last = lastMutation.get(object);
        if (last != null && now - last < intervalNanos && !burstAdmitted.getAsBoolean()) {
            // GCS's own wording for this refusal
            throw new GcsError(429, "rateLimitExceeded", "The object " + object + " exceeded the rate limit for object"
                    + " mutation operations (create, update, and delete). Please reduce your request rate. See"
                    + " https://cloud.google.com/storage/docs/gcs429. (test server: at most one write per "
                    + interval().toMillis() + " ms to one object name; the last was " + (now - last) / 1_000_000 + " ms ago)");
        }
        if (lastMutation.size() >= PRUNE_AT) lastMutation.values().removeIf(t -> now - t >= intervalNanos);
        lastMutation.put(object, now);
    }
}
