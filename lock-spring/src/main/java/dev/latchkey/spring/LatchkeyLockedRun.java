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

    /** Makes {@code lease} current until the returned scope closes, then restores the outer one. */
    static Scope enter(Lease lease) {
        Lease outer = CURRENT.get();
        CURRENT.set(lease);
        return () -> {
            if (outer == null) CURRENT.remove(); else CURRENT.set(outer);
        };
    }

    interface Scope extends AutoCloseable {
        @Override
        void close();
    }
}
