package dev.latchkey.spi;

import dev.latchkey.LockListener;
import java.util.Objects;
import java.util.Optional;

/**
 * What a provider gets besides the URI: the clocks to use and the manager's {@link LockListener}.
 * Immutable; defaults suit production (system clocks, no listener).
 * <pre>{@code
 * LockManager locks = Latchkey.open(uri, LockContext.defaults().withListener(myListener));
 * }</pre>
 */
public final class LockContext {
    private static final LockContext DEFAULT = new LockContext(TimeSource.system(), null);

    private final TimeSource time;
    private final LockListener listener; // null = none

    private LockContext(TimeSource time, LockListener listener) {
        this.time = time;
        this.listener = listener;
    }

    public static LockContext defaults() {
        return DEFAULT;
    }

    public LockContext withTime(TimeSource time) {
        return new LockContext(Objects.requireNonNull(time, "time"), listener);
    }

    /**
     * The one listener of the managers opened with this context (replacing any set before; to
     * reach several, fan out in your own listener). See {@link LockListener} for how it is called.
     */
    public LockContext withListener(LockListener listener) {
        return new LockContext(time, Objects.requireNonNull(listener, "listener"));
    }

    public TimeSource time() {
        return time;
    }

    public Optional<LockListener> listener() {
        return Optional.ofNullable(listener);
    }
}
