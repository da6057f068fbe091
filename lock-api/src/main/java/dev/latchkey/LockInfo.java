package dev.latchkey;

import java.time.Instant;
import java.util.Map;
import java.util.Objects;

/**
 * A snapshot of who holds a key, as the store last recorded it. Times are the holder's own
 * report and are informational only: no backend decides expiry by comparing them with a local clock.
 *
 * @param key          the locked key
 * @param owner        holder identity ({@code user@host/pid} unless set in {@link LeaseOptions})
 * @param leaseId      random id of that acquisition
 * @param fencingToken the acquisition's token, or 0 where the backend has none
 * @param acquiredAt   when the holder acquired the lock
 * @param expiresAt    when the lease ends unless renewed
 * @param metadata     small caller-supplied map; never credentials
 */
public record LockInfo(String key, String owner, String leaseId, long fencingToken,
                       Instant acquiredAt, Instant expiresAt, Map<String, String> metadata) {
    public LockInfo {
        Objects.requireNonNull(key, "key");
        owner = owner == null ? "unknown" : owner;
        metadata = metadata == null ? Map.of() : Map.copyOf(metadata);
    }

    /** One phrase for messages: {@code alice@build-7/4242 since 2026-11-29T10:15:00Z (token 12)}. */
    public String describeHolder() {
        StringBuilder sb = new StringBuilder(owner);
        if (acquiredAt != null) sb.append(" since ").append(acquiredAt);
        if (fencingToken > 0) sb.append(" (token ").append(fencingToken).append(')');
        return sb.toString();
    }
}
