package dev.latchkey;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * How a lease is held: its TTL, its heartbeat, who owns it and a little metadata. Immutable;
 * each {@code with…} returns a copy, so options read like a sentence:
 * <pre>{@code
 * LeaseOptions.ttl(Duration.ofSeconds(30)).withOwner("nightly-export").withHeartbeat(Duration.ofSeconds(5))
 * }</pre>
 * Defaults: TTL 60 s; heartbeat every TTL/3 ({@link Duration#ZERO} turns it off); owner
 * {@code user@host/pid}; no metadata.
 */
public final class LeaseOptions {
    public static final Duration DEFAULT_TTL = Duration.ofSeconds(60);
    public static final Duration MIN_TTL = Duration.ofMillis(100);
    private static final Pattern META_NAME = Pattern.compile("[A-Za-z0-9_.-]{1,64}");
    private static final LeaseOptions DEFAULTS = new LeaseOptions(DEFAULT_TTL, null, null, Map.of());

    private final Duration ttl;
    private final Duration heartbeat; // null = ttl/3
    private final String owner;       // null = Owners.defaultOwner()
    private final Map<String, String> metadata;

    private LeaseOptions(Duration ttl, Duration heartbeat, String owner, Map<String, String> metadata) {
        this.ttl = ttl;
        this.heartbeat = heartbeat;
        this.owner = owner;
        this.metadata = metadata;
    }

    public static LeaseOptions defaults() {
        return DEFAULTS;
    }

    /** Shorthand for {@code defaults().withTtl(ttl)}. */
    public static LeaseOptions ttl(Duration ttl) {
        return DEFAULTS.withTtl(ttl);
    }

    /** The lease ends this long after its last successful renewal (at least 100 ms). */
    public LeaseOptions withTtl(Duration ttl) {
        Objects.requireNonNull(ttl, "ttl");
        if (ttl.compareTo(MIN_TTL) < 0) {
            throw new IllegalArgumentException("ttl must be at least 100ms, was " + ttl);
        }
        return new LeaseOptions(ttl, heartbeat, owner, metadata);
    }

    /** Renew every {@code interval} on the shared scheduler; {@link Duration#ZERO} = no heartbeat. */
    public LeaseOptions withHeartbeat(Duration interval) {
        Objects.requireNonNull(interval, "interval");
        if (interval.isNegative()) throw new IllegalArgumentException("heartbeat must not be negative");
        return new LeaseOptions(ttl, interval, owner, metadata);
    }

    /** Same as {@code withHeartbeat(Duration.ZERO)}: the caller renews, or the lease ends at its TTL. */
    public LeaseOptions withoutHeartbeat() {
        return withHeartbeat(Duration.ZERO);
    }

    /** Who holds the lock, as shown to contenders and in {@code latchkey status}. Max 256 chars. */
    public LeaseOptions withOwner(String owner) {
        Objects.requireNonNull(owner, "owner");
        if (owner.isEmpty() || owner.length() > 256 || owner.chars().anyMatch(Character::isISOControl)) {
            throw new IllegalArgumentException("owner must be 1..256 characters without control characters");
        }
        return new LeaseOptions(ttl, heartbeat, owner, metadata);
    }

    /**
     * A small map stored with the lease (at most 16 entries, names {@code [A-Za-z0-9_.-]{1,64}},
     * values up to 256 characters). Visible to anyone who can inspect the lock: no secrets here.
     */
    public LeaseOptions withMetadata(Map<String, String> metadata) {
        Objects.requireNonNull(metadata, "metadata");
        if (metadata.size() > 16) throw new IllegalArgumentException("at most 16 metadata entries");
        Map<String, String> copy = new LinkedHashMap<>();
        metadata.forEach((k, v) -> {
            if (k == null || !META_NAME.matcher(k).matches()) {
                throw new IllegalArgumentException("bad metadata name: " + k);
            }
            if (v == null || v.length() > 256 || v.chars().anyMatch(Character::isISOControl)) {
                throw new IllegalArgumentException("metadata value for " + k + " must be 0..256 printable characters");
            }
            copy.put(k, v);
        });
        return new LeaseOptions(ttl, heartbeat, owner, Map.copyOf(copy));
    }

    public Duration ttl() {
        return ttl;
    }

    /** The effective heartbeat interval; zero when off. */
    public Duration heartbeat() {
        return heartbeat != null ? heartbeat : ttl.dividedBy(3);
    }

    public boolean heartbeatEnabled() {
        return !heartbeat().isZero();
    }

    public String owner() {
        return owner != null ? owner : Owners.defaultOwner();
    }

    public Map<String, String> metadata() {
        return metadata;
    }

    @Override
    public String toString() {
        return "LeaseOptions[ttl=" + Durations.format(ttl) + ", heartbeat=" + Durations.format(heartbeat())
                + ", owner=" + owner() + ", metadata=" + metadata.keySet() + "]";
    }
}
