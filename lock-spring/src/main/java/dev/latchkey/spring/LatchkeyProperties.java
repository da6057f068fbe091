package dev.latchkey.spring;

import dev.latchkey.LeaseOptions;
import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * The {@code latchkey.*} properties. Only {@code latchkey.uri} is required; the rest default to
 * {@link LeaseOptions#defaults()}. Every lease this module takes (the {@link LatchkeyLockRegistry}'s,
 * {@link LatchkeyLocked @LatchkeyLocked} runs') starts from {@link #leaseOptions()}, so a bad value
 * fails at start-up, not at the first lock.
 */
@ConfigurationProperties("latchkey")
public class LatchkeyProperties {
    /** The backend, e.g. {@code postgres://app@db/locks} or {@code file:///var/lib/latchkey}. */
    private String uri;
    /** How long a lease outlives its holder's last renewal (at least 100 ms). */
    private Duration ttl = LeaseOptions.DEFAULT_TTL;
    /** How often a held lease is renewed; unset = ttl/3, 0 = never (the holder renews). */
    private Duration heartbeat;
    /** Who holds the lock, as contenders and {@code latchkey status} see it; unset = user@host/pid. */
    private String owner;

    public String getUri() {
        return uri;
    }

    public void setUri(String uri) {
        this.uri = uri;
    }

    public Duration getTtl() {
        return ttl;
    }

    public void setTtl(Duration ttl) {
        this.ttl = ttl;
    }

    public Duration getHeartbeat() {
        return heartbeat;
    }

    public void setHeartbeat(Duration heartbeat) {
        this.heartbeat = heartbeat;
    }

    public String getOwner() {
        return owner;
    }

    public void setOwner(String owner) {
        this.owner = owner;
    }

    /** The default options; {@link LeaseOptions}' own checks reject a bad TTL, heartbeat or owner. */
    public LeaseOptions leaseOptions() {
        LeaseOptions options = LeaseOptions.ttl(ttl);
        if (heartbeat != null) options = options.withHeartbeat(heartbeat);
        if (owner != null) options = options.withOwner(owner);
        return options;
    }

    /**
     * {@link #leaseOptions()} with another TTL. An explicit {@code latchkey.heartbeat} is kept only
     * while it is shorter than that TTL; otherwise the heartbeat is ttl/3 of the new TTL.
     */
    public LeaseOptions leaseOptions(Duration otherTtl) {
        LeaseOptions options = LeaseOptions.ttl(otherTtl);
        if (heartbeat != null && (heartbeat.isZero() || heartbeat.compareTo(otherTtl) < 0)) {
            options = options.withHeartbeat(heartbeat);
        }
        if (owner != null) options = options.withOwner(owner);
        return options;
    }
}
