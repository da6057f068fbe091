package dev.latchkey.spring;

import dev.latchkey.Lease;
import java.util.Optional;

/**
 * The lease of the {@link LatchkeyLocked @LatchkeyLocked} method running on the current thread.
 * Empty outside such a method; the innermost one's lease where they nest.
 */
public final class LatchkeyLockedRun {
    private static final ThreadLocal<Lease> CURRENT = new ThreadLocal<>();

    private LatchkeyLockedRun() {}

    public static Optional<Lease> currentLease() {
        return Optional.ofNullable(CURRENT.get());
    }

    /** Makes {@code lease} current; returns the outer one, for {@link #restore}. */
    static Lease enter(Lease lease) {
        Lease outer = CURRENT.get();
        CURRENT.set(lease);
        return outer;
    }

    static void restore(Lease outer) {
        if (outer == null) CURRENT.remove(); else CURRENT.set(outer);
    }
}
