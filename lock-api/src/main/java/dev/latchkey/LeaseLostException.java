package dev.latchkey;

import java.util.Objects;

/**
 * The lease is no longer ours; {@link #reason()} says why. Work done under it may have overlapped
 * with the next holder's only where the reason says another client may have got in (every reason
 * but those that {@linkplain Reason#ranOutLocally() ran out locally}, which leave a safety margin
 * to stop in); stop, and do not write results that the lock was meant to protect.
 */
public class LeaseLostException extends LockException {
    private static final long serialVersionUID = 1L;

    /** Why a lease was lost. */
    public enum Reason {
        /**
         * Not renewed in time, with no renewal failing: the heartbeat was off, or the process or its
         * heartbeat stalled. The lease turned invalid a safety margin before anyone else could get in.
         */
        EXPIRED,
        /**
         * Renewals were tried but none landed (the store failed, was unreachable, or had not answered
         * a heartbeat's renewal) by the lease's deadline. The lease turned invalid a safety margin before anyone else could get in.
         */
        STORE_UNREACHABLE,
        /**
         * No renewal could run by the lease's deadline because a renewer thread could not be started:
         * the process or its container reached its thread limit ({@code OutOfMemoryError: unable to
         * create native thread}, a cgroup's pids limit), or the application's thread factory refused.
         * The lease turned invalid a safety margin before anyone else could get in.
         */
        NO_RENEWER_THREAD,
        /** Broken by {@link LockManager#forceRelease}: the next holder may already be in. */
        BROKEN,
        /** The store shows another holder: the lease had run out and someone took over. */
        TAKEN_OVER,
        /** The store's session that held the lock ended (a PostgreSQL session terminated, a server restart). */
        SESSION_ENDED,
        /** The store no longer has the lock's record or object (deleted by hand?). */
        GONE;

        /**
         * True when the lease ran out on this process's clock ({@link #EXPIRED},
         * {@link #STORE_UNREACHABLE}, {@link #NO_RENEWER_THREAD}): it turned invalid a safety margin (TTL/5) before the store
         * could let anyone else in, so work stopped within that margin overlapped no one. False when
         * another client may already hold the lock.
         */
        public boolean ranOutLocally() {
            return this == EXPIRED || this == STORE_UNREACHABLE || this == NO_RENEWER_THREAD;
        }
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
