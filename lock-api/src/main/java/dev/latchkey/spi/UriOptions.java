package dev.latchkey.spi;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;

/**
 * The typed options of a backend's client factory ({@code S3Locks.options().timeout(...)}), kept
 * as the URI parameters they stand for. A backend's settings record is parsed from a URI once; the
 * options reach it the same way ({@link #toUri}), so a value given here is checked by the same code,
 * with the same message, as the value in a URI, and the two routes cannot drift apart.
 *
 * <p>A subclass adds one public setter per parameter, each a line: {@code return set("poll", poll);}.
 * Setting a parameter twice keeps the last value. Not thread-safe: build, then hand over.
 *
 * @param <SELF> the subclass, so its setters chain
 */
public abstract class UriOptions<SELF extends UriOptions<SELF>> {
    private final Map<String, String> params = new LinkedHashMap<>();
    private String path = "";

    protected UriOptions() {}

    /** The URI's path below its authority (a bucket's prefix), without the leading slash; default none. */
    protected final SELF path(String path) {
        this.path = Objects.requireNonNull(path, "path");
        return self();
    }

    protected final SELF set(String name, String value) {
        params.put(name, Objects.requireNonNull(value, name));
        return self();
    }

    /** A duration in milliseconds, as {@code 1500ms} (every backend's duration parameters read it). */
    protected final SELF set(String name, Duration value) {
        return set(name, Objects.requireNonNull(value, name).toMillis() + "ms");
    }

    protected final SELF set(String name, long value) {
        return set(name, Long.toString(value));
    }

    protected final SELF set(String name, boolean value) {
        return set(name, Boolean.toString(value));
    }

    /** An enum constant by its lower-case name, as URIs spell them ({@code mode=lease}). */
    protected final SELF set(String name, Enum<?> value) {
        return set(name, Objects.requireNonNull(value, name).name().toLowerCase(Locale.ROOT));
    }

    /** {@code base} (scheme and authority, e.g. {@code s3://bucket}), then the path if set, with these options as its parameters. */
    protected final LockUri toUri(String base) {
        return LockUri.parse(path.isEmpty() ? base : base + "/" + path, params);
    }

    @SuppressWarnings("unchecked") // SELF is the subclass by the class's declaration
    private SELF self() {
        return (SELF) this;
    }
}
