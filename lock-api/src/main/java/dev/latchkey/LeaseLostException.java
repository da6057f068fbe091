package dev.latchkey;

import java.util.Objects;

/**
 * The lease is no longer ours; {@link #reason()} says why. Work done under it may have overlapped
 * with the next holder's only where the reason says another client got in ({@link Reason#BROKEN},
 * or a server that ended the session early); stop, and do not write results that the lock was meant
 * to protect.
 */
public class LeaseLostException extends LockException {
    private static final long serialVersionUID = 1L;

    /** Why a lease was lost. */
    public enum Reason {
        /**
         * Not renewed in time: the store was unreachable or slow past the safety margin, the heartbeat
         * was off, or the process stalled. The lease turned invalid before anyone else could get in.
         */
        EXPIRED,
        /** Broken by {@link LockManager#forceRelease}: the next holder may already be in. */
        BROKEN,
        /** The store shows another holder: the lease had run out and someone took over. */
        TAKEN_OVER,
        /** The store's session that held the lock ended (a PostgreSQL session terminated, a server restart). */
        SESSION_ENDED,
        /** The store no longer has the lock's record or object (deleted by hand?). */
        GONE
    }

    private final Reason reason;

    public LeaseLostException(Reason reason, String message) {
        this(reason, message, null);
    }

    public LeaseLostException(Reason reason, String message, Throwable cause) {
        super(message, cause);
        this.reason = Objects.requireNonNull(reason, "reason");
    }

    public Reason reason() {
        return reason;
    }
}
