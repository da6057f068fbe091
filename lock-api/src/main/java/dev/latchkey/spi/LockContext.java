package dev.latchkey.spi;

import java.util.Objects;

/** What a provider gets besides the URI: the clocks to use. Defaults suit production. */
public final class LockContext {
    private static final LockContext DEFAULT = new LockContext(TimeSource.system());

    private final TimeSource time;

    private LockContext(TimeSource time) {
        this.time = time;
    }

    public static LockContext defaults() {
        return DEFAULT;
    }

    public LockContext withTime(TimeSource time) {
        return new LockContext(Objects.requireNonNull(time, "time"));
    }

    public TimeSource time() {
        return time;
    }
}
